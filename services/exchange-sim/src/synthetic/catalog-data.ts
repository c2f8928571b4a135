import type { GammaTag } from '../protocol.js';

/**
 * Reference data for the synthetic catalog: the exchange's tags (ids as Gamma spells them, strings),
 * leagues with their teams, coins, and templates for the non-sport families.
 */
const TAG_TABLE: ReadonlyArray<[string, string, string]> = [
  ['1', 'Sports', 'sports'],
  ['100350', 'Soccer', 'soccer'],
  ['82', 'EPL', 'epl'],
  ['780', 'La Liga', 'la-liga'],
  ['101962', 'Serie A', 'serie-a'],
  ['1494', 'Bundesliga', 'bundesliga'],
  ['100977', 'UCL', 'ucl'],
  ['100100', 'MLS', 'mls'],
  ['28', 'Basketball', 'basketball'],
  ['745', 'NBA', 'nba'],
  ['10', 'Football', 'football'],
  ['450', 'NFL', 'nfl'],
  ['100639', 'Games', 'games'],
  ['21', 'Crypto', 'crypto'],
  ['235', 'Bitcoin', 'bitcoin'],
  ['39', 'Ethereum', 'ethereum'],
  ['818', 'Solana', 'solana'],
  ['101267', 'XRP', 'xrp'],
  ['102127', 'Up or Down', 'up-or-down'],
  ['1312', 'Crypto Prices', 'crypto-prices'],
  ['2', 'Politics', 'politics'],
  ['144', 'Elections', 'elections'],
  ['100265', 'Geopolitics', 'geopolitics'],
  ['100328', 'Economy', 'economy'],
  ['100196', 'Fed', 'fed'],
  ['120', 'Finance', 'finance'],
  ['1401', 'Tech', 'tech'],
  ['439', 'AI', 'ai'],
  ['74', 'Science', 'science'],
  ['596', 'Pop Culture', 'pop-culture'],
  ['102012', 'Culture', 'culture'],
  ['315', 'Entertainment', 'entertainment'],
];

export const ALL_TAGS: readonly GammaTag[] = TAG_TABLE.map(([id, label, slug]) => ({ id, label, slug }));

/** Tags by slug, in the order given (Gamma lists the broad tag first). */
export function tagsFor(...slugs: string[]): GammaTag[] {
  return slugs.map((slug) => {
    const tag = ALL_TAGS.find((t) => t.slug === slug);
    if (!tag) throw new Error(`unknown tag slug ${slug}`);
    return { ...tag };
  });
}

export type Sport = 'soccer' | 'basketball' | 'football';

export interface Team {
  name: string;
  abbreviation: string;
}

export interface League {
  /** Tag slug of the league (`epl`, `nba`…). */
  key: string;
  /** `sport` key of GET /sports and the sports feed's `leagueAbbreviation`. */
  abbreviation: string;
  sport: Sport;
  series: string;
  teams: readonly Team[];
}

const t = (name: string, abbreviation: string): Team => ({ name, abbreviation });

export const LEAGUES: readonly League[] = [
  {
    key: 'epl', abbreviation: 'epl', sport: 'soccer', series: '10188',
    teams: [t('Arsenal', 'ARS'), t('Chelsea', 'CHE'), t('Liverpool', 'LIV'), t('Manchester City', 'MCI'),
      t('Manchester United', 'MUN'), t('Tottenham', 'TOT'), t('Newcastle', 'NEW'), t('Aston Villa', 'AVL'),
      t('Brighton', 'BHA'), t('West Ham', 'WHU')],
  },
  {
    key: 'la-liga', abbreviation: 'lal', sport: 'soccer', series: '10193',
    teams: [t('Real Madrid', 'RMA'), t('Barcelona', 'BAR'), t('Atlético Madrid', 'ATM'), t('Sevilla', 'SEV'),
      t('Real Sociedad', 'RSO'), t('Villarreal', 'VIL'), t('Real Betis', 'BET'), t('Athletic Club', 'ATH')],
  },
  {
    key: 'serie-a', abbreviation: 'sea', sport: 'soccer', series: '10203',
    teams: [t('Inter', 'INT'), t('AC Milan', 'MIL'), t('Juventus', 'JUV'), t('Napoli', 'NAP'), t('Roma', 'ROM'),
      t('Lazio', 'LAZ'), t('Atalanta', 'ATA'), t('Fiorentina', 'FIO')],
  },
  {
    key: 'bundesliga', abbreviation: 'bun', sport: 'soccer', series: '10194',
    teams: [t('Bayern Munich', 'BAY'), t('Borussia Dortmund', 'BVB'), t('RB Leipzig', 'RBL'),
      t('Bayer Leverkusen', 'LEV'), t('Eintracht Frankfurt', 'SGE'), t('VfB Stuttgart', 'VFB')],
  },
  {
    key: 'ucl', abbreviation: 'ucl', sport: 'soccer', series: '10204',
    teams: [t('Real Madrid', 'RMA'), t('Manchester City', 'MCI'), t('Bayern Munich', 'BAY'), t('PSG', 'PSG'),
      t('Inter', 'INT'), t('Arsenal', 'ARS'), t('Barcelona', 'BAR'), t('Benfica', 'BEN')],
  },
  {
    key: 'mls', abbreviation: 'mls', sport: 'soccer', series: '10189',
    teams: [t('Inter Miami', 'MIA'), t('LA Galaxy', 'LAG'), t('LAFC', 'LAFC'), t('Seattle Sounders', 'SEA'),
      t('Atlanta United', 'ATL'), t('NYCFC', 'NYC')],
  },
  {
    key: 'nba', abbreviation: 'nba', sport: 'basketball', series: '10345',
    teams: [t('Lakers', 'LAL'), t('Celtics', 'BOS'), t('Warriors', 'GSW'), t('Nuggets', 'DEN'), t('Bucks', 'MIL'),
      t('Knicks', 'NYK'), t('Heat', 'MIA'), t('Suns', 'PHX'), t('76ers', 'PHI'), t('Mavericks', 'DAL')],
  },
  {
    key: 'nfl', abbreviation: 'nfl', sport: 'football', series: '10187',
    teams: [t('Chiefs', 'KC'), t('Eagles', 'PHI'), t('Bills', 'BUF'), t('49ers', 'SF'), t('Cowboys', 'DAL'),
      t('Ravens', 'BAL'), t('Lions', 'DET'), t('Packers', 'GB')],
  },
];

export function league(key: string): League {
  const found = LEAGUES.find((l) => l.key === key);
  if (!found) throw new Error(`unknown league ${key}`);
  return found;
}

/** Tags of a league's events, as the exchange tags them. */
export function leagueTags(l: League): GammaTag[] {
  if (l.sport === 'soccer') return tagsFor('sports', 'soccer', l.key);
  if (l.sport === 'basketball') return tagsFor('sports', 'basketball', l.key, 'games');
  return tagsFor('sports', 'football', l.key, 'games');
}

export type CoinKey = 'bitcoin' | 'ethereum' | 'solana' | 'xrp';

export interface Coin {
  key: CoinKey;
  name: string;
  symbol: string;
  spot: number;
  /** Strike step of the "above ___" ladders. */
  step: number;
}

export const COINS: readonly Coin[] = [
  { key: 'bitcoin', name: 'Bitcoin', symbol: 'BTC', spot: 101_500, step: 2_500 },
  { key: 'ethereum', name: 'Ethereum', symbol: 'ETH', spot: 3_900, step: 100 },
  { key: 'solana', name: 'Solana', symbol: 'SOL', spot: 215, step: 10 },
  { key: 'xrp', name: 'XRP', symbol: 'XRP', spot: 2.4, step: 0.1 },
];

export type GenericFamily = 'politics' | 'economy' | 'tech' | 'culture';

/**
 * A non-sport event template. `{when}` in texts is filled with a horizon; `options` makes a
 * multi-market, mutually exclusive event (one market per option); otherwise one Yes/No market.
 */
export interface GenericTemplate {
  title: string;
  tags: readonly string[];
  options?: readonly string[];
  /** Question per option; `{option}` and `{when}` are filled. */
  question?: string;
  /** Days from creation to the end date. */
  days: number;
}

export const HORIZONS: readonly string[] = ['by March 31', 'by June 30', 'by September 30', 'by December 31', 'in 2026', 'in 2027'];
export const MONTHS: readonly string[] = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

export const GENERIC_TEMPLATES: Record<GenericFamily, readonly GenericTemplate[]> = {
  politics: [
    { title: 'Presidential Election Winner 2028', tags: ['politics', 'elections'], days: 900,
      options: ['JD Vance', 'Gavin Newsom', 'Marco Rubio', 'Alexandria Ocasio-Cortez'],
      question: 'Will {option} win the 2028 US Presidential Election?' },
    { title: 'Which party wins the House in 2026?', tags: ['politics', 'elections'], days: 300,
      options: ['Democrats', 'Republicans'], question: 'Will the {option} win the House in 2026?' },
    { title: 'Russia x Ukraine ceasefire {when}?', tags: ['politics', 'geopolitics'], days: 120 },
    { title: 'Will Zelenskyy and Putin meet {when}?', tags: ['politics', 'geopolitics'], days: 150 },
    { title: 'Next UK Prime Minister?', tags: ['politics', 'elections'], days: 400,
      options: ['Keir Starmer', 'Kemi Badenoch', 'Nigel Farage', 'Angela Rayner'],
      question: 'Will {option} be the next UK Prime Minister?' },
    { title: 'US government shutdown {when}?', tags: ['politics'], days: 90 },
    { title: 'France snap election {when}?', tags: ['politics', 'elections'], days: 200 },
    { title: 'China invades Taiwan {when}?', tags: ['politics', 'geopolitics'], days: 250 },
  ],
  economy: [
    { title: 'Fed decision in {month}?', tags: ['economy', 'fed'], days: 30,
      options: ['50+ bps decrease', '25 bps decrease', 'No change', '25+ bps increase'],
      question: 'Fed {option} after {month} meeting?' },
    { title: 'US recession {when}?', tags: ['economy', 'finance'], days: 300 },
    { title: 'How many Fed rate cuts in 2026?', tags: ['economy', 'fed'], days: 330,
      options: ['0', '1', '2', '3', '4+'], question: 'Will {option} Fed rate cuts happen in 2026?' },
    { title: 'S&P 500 above 7,000 {when}?', tags: ['economy', 'finance'], days: 120 },
    { title: 'Gold above $4,000 {when}?', tags: ['economy', 'finance'], days: 100 },
    { title: 'US unemployment above 5% {when}?', tags: ['economy'], days: 200 },
    { title: 'US CPI above 3% in {month}?', tags: ['economy', 'finance'], days: 40 },
  ],
  tech: [
    { title: 'Best AI model end of {month}?', tags: ['tech', 'ai'], days: 45,
      options: ['Google', 'OpenAI', 'Anthropic', 'xAI'], question: 'Will {option} have the best AI model at the end of {month}?' },
    { title: 'OpenAI announces GPT-6 {when}?', tags: ['tech', 'ai'], days: 180 },
    { title: 'Apple releases a foldable iPhone {when}?', tags: ['tech'], days: 300 },
    { title: 'SpaceX Starship reaches orbit {when}?', tags: ['tech', 'science'], days: 120 },
    { title: 'Tesla launches unsupervised FSD {when}?', tags: ['tech', 'ai'], days: 200 },
    { title: 'Largest company end of {month}?', tags: ['tech'], days: 40,
      options: ['Nvidia', 'Microsoft', 'Apple', 'Alphabet'], question: 'Will {option} be the largest company at the end of {month}?' },
  ],
  culture: [
    { title: 'Top Spotify artist in {month}?', tags: ['pop-culture', 'culture'], days: 35,
      options: ['Taylor Swift', 'Bad Bunny', 'The Weeknd', 'Sabrina Carpenter'],
      question: 'Will {option} be the top Spotify artist in {month}?' },
    { title: 'Oscars 2026: Best Picture winner?', tags: ['culture', 'entertainment'], days: 120,
      options: ['One Battle After Another', 'Hamnet', 'Sinners', 'Marty Supreme'],
      question: 'Will "{option}" win Best Picture at the 2026 Oscars?' },
    { title: 'GTA VI released {when}?', tags: ['culture', 'entertainment'], days: 250 },
    { title: 'Taylor Swift announces a new album {when}?', tags: ['pop-culture'], days: 150 },
    { title: 'MrBeast hits 500M subscribers {when}?', tags: ['culture', 'pop-culture'], days: 200 },
    { title: 'Highest grossing movie of 2026?', tags: ['entertainment', 'culture'], days: 360,
      options: ['Avengers: Doomsday', 'Toy Story 5', 'The Super Mario Galaxy Movie', 'Spider-Man: Brand New Day'],
      question: 'Will "{option}" be the highest grossing movie of 2026?' },
  ],
};
