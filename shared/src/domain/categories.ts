/** The event categories (docs/design.md "Categories from exchange tags"); the API's enum is built from this list. */
export const CATEGORIES = ['Football', 'Sport', 'Crypto', 'Politics', 'Economy', 'Tech', 'Culture'] as const;
export type Category = (typeof CATEGORIES)[number];

/**
 * Exchange tags → our categories and league/coin keys (docs/design.md "Categories from exchange tags").
 *
 * Tags come from the catalog as `{id, label, slug}` (the array may be null, slugs or labels may be
 * missing). Both slug and label are normalised (lower case, spaces → dashes) and matched against
 * one table, so `{slug: 'la-liga'}` and `{label: 'La Liga'}` mean the same thing.
 */

interface LeagueDefinition {
  key: string;
  category: Category;
  label: string;
  /** Normalised tag slugs / labels that name this league or coin. */
  aliases: readonly string[];
}

const LEAGUES: readonly LeagueDefinition[] = [
  // Soccer → Football.
  { key: 'epl', category: 'Football', label: 'EPL', aliases: ['epl', 'premier-league', 'english-premier-league'] },
  { key: 'laliga', category: 'Football', label: 'La Liga', aliases: ['laliga', 'la-liga', 'lal'] },
  { key: 'seriea', category: 'Football', label: 'Serie A', aliases: ['seriea', 'serie-a', 'sea'] },
  { key: 'bundesliga', category: 'Football', label: 'Bundesliga', aliases: ['bundesliga', 'bun'] },
  { key: 'ligue1', category: 'Football', label: 'Ligue 1', aliases: ['ligue1', 'ligue-1', 'fl1'] },
  { key: 'ucl', category: 'Football', label: 'Champions League', aliases: ['ucl', 'champions-league', 'uefa-champions-league'] },
  { key: 'mls', category: 'Football', label: 'MLS', aliases: ['mls'] },
  // Other sports and esports → Sport.
  { key: 'nba', category: 'Sport', label: 'NBA', aliases: ['nba'] },
  { key: 'nfl', category: 'Sport', label: 'NFL', aliases: ['nfl'] },
  { key: 'mlb', category: 'Sport', label: 'MLB', aliases: ['mlb'] },
  { key: 'nhl', category: 'Sport', label: 'NHL', aliases: ['nhl'] },
  { key: 'ncaab', category: 'Sport', label: 'College Basketball', aliases: ['ncaab', 'ncaa-basketball', 'college-basketball', 'cbb'] },
  { key: 'cfb', category: 'Sport', label: 'College Football', aliases: ['cfb', 'ncaaf', 'college-football'] },
  { key: 'ufc', category: 'Sport', label: 'UFC', aliases: ['ufc'] },
  { key: 'atp', category: 'Sport', label: 'ATP', aliases: ['atp'] },
  { key: 'wta', category: 'Sport', label: 'WTA', aliases: ['wta'] },
  { key: 'f1', category: 'Sport', label: 'Formula 1', aliases: ['f1', 'formula-1', 'formula1'] },
  { key: 'cs2', category: 'Sport', label: 'Counter-Strike 2', aliases: ['cs2', 'counter-strike', 'counter-strike-2', 'csgo', 'cs-go'] },
  { key: 'lol', category: 'Sport', label: 'League of Legends', aliases: ['lol', 'league-of-legends'] },
  { key: 'dota2', category: 'Sport', label: 'Dota 2', aliases: ['dota2', 'dota-2', 'dota'] },
  { key: 'valorant', category: 'Sport', label: 'Valorant', aliases: ['valorant', 'val'] },
  // Coins → Crypto.
  { key: 'btc', category: 'Crypto', label: 'Bitcoin', aliases: ['btc', 'bitcoin'] },
  { key: 'eth', category: 'Crypto', label: 'Ethereum', aliases: ['eth', 'ethereum'] },
  { key: 'sol', category: 'Crypto', label: 'Solana', aliases: ['sol', 'solana'] },
  { key: 'xrp', category: 'Crypto', label: 'XRP', aliases: ['xrp', 'ripple'] },
  { key: 'doge', category: 'Crypto', label: 'Dogecoin', aliases: ['doge', 'dogecoin'] },
];

/**
 * Every league and coin key we know: its category (the `group` of a `leagues` entry) and its
 * human label. The table behind {@link classifyEvent} and {@link leagueLabel}.
 */
export const LEAGUE_KEYS: ReadonlyArray<{ key: string; category: Category; label: string }> = LEAGUES.map(
  ({ key, category, label }) => ({ key, category, label }),
);

/**
 * Generic tags that name a category but no league. `football` is deliberately Sport: on the
 * exchange it tags American football (NFL events carry `sports, football, nfl`); soccer is `soccer`.
 */
const CATEGORY_TAGS: ReadonlyArray<readonly [Category, readonly string[]]> = [
  ['Football', ['soccer']],
  [
    'Sport',
    ['sports', 'sport', 'football', 'american-football', 'basketball', 'baseball', 'hockey', 'tennis', 'golf',
      'mma', 'boxing', 'cricket', 'rugby', 'racing', 'motorsport', 'nascar', 'esports', 'e-sports', 'chess'],
  ],
  ['Crypto', ['crypto', 'cryptocurrency', 'crypto-prices', 'defi', 'memecoins', 'stablecoins', 'airdrops']],
  ['Economy', ['economy', 'economics', 'finance', 'fed', 'fed-rates', 'interest-rates', 'inflation', 'macro',
    'stocks', 'business', 'earnings', 'ipos', 'commodities', 'recession', 'gdp']],
  ['Tech', ['tech', 'technology', 'ai', 'artificial-intelligence', 'science', 'space', 'big-tech']],
  ['Politics', ['politics', 'elections', 'election', 'geopolitics', 'us-politics', 'world-politics',
    'global-politics', 'us-elections', 'world-elections', 'global-elections', 'congress', 'senate']],
  ['Culture', ['culture', 'pop-culture', 'entertainment', 'movies', 'music', 'tv', 'awards', 'celebrities']],
];

/**
 * Which category wins when tags disagree (an event tagged both `sports` and `politics`): the more
 * specific, more reliably tagged signal first. Sports and crypto tags are precise on the exchange;
 * politics and culture are applied broadly, so they rank last.
 */
const CATEGORY_PRIORITY: readonly Category[] = ['Football', 'Sport', 'Crypto', 'Economy', 'Tech', 'Politics', 'Culture'];

/** Category given to an event nothing identifies: the catch-all bucket least likely to mislead. */
const FALLBACK_CATEGORY: Category = 'Culture';

const leagueByAlias = new Map<string, LeagueDefinition>();
for (const league of LEAGUES) for (const alias of league.aliases) leagueByAlias.set(alias, league);

const categoryByTag = new Map<string, Category>();
for (const [category, tags] of CATEGORY_TAGS) for (const tag of tags) categoryByTag.set(tag, category);

const leagueByKey = new Map<string, LeagueDefinition>(LEAGUES.map((league) => [league.key, league]));

/** Title words that identify a league or coin when the tags do not (word-bounded, case-insensitive). */
const TITLE_LEAGUES: ReadonlyArray<readonly [RegExp, string]> = [
  [/\b(bitcoin|btc)\b/i, 'btc'],
  [/\b(ethereum|eth)\b/i, 'eth'],
  [/\bsolana\b/i, 'sol'],
  [/\b(xrp|ripple)\b/i, 'xrp'],
  [/\b(dogecoin|doge)\b/i, 'doge'],
  [/\b(premier league|epl)\b/i, 'epl'],
  [/\bla ?liga\b/i, 'laliga'],
  [/\bserie a\b/i, 'seriea'],
  [/\bbundesliga\b/i, 'bundesliga'],
  [/\bligue 1\b/i, 'ligue1'],
  [/\b(champions league|ucl)\b/i, 'ucl'],
  [/\bmls\b/i, 'mls'],
  [/\bnba\b/i, 'nba'],
  [/\bnfl\b/i, 'nfl'],
  [/\bmlb\b/i, 'mlb'],
  [/\bnhl\b/i, 'nhl'],
  [/\bufc\b/i, 'ufc'],
  [/\b(f1|formula 1)\b/i, 'f1'],
  [/\b(cs2|counter-strike)\b/i, 'cs2'],
  [/\bleague of legends\b/i, 'lol'],
  [/\bdota 2?\b/i, 'dota2'],
  [/\bvalorant\b/i, 'valorant'],
];

/** Title words that identify only a category, checked in {@link CATEGORY_PRIORITY} order. */
const TITLE_CATEGORIES: ReadonlyArray<readonly [RegExp, Category]> = [
  [/\b(crypto|cryptocurrency)\b/i, 'Crypto'],
  [/\b(fed|interest rates?|inflation|cpi|gdp|recession|s&p 500|nasdaq)\b/i, 'Economy'],
  [/\b(ai|openai|gpt-?\d*|chatgpt|spacex|nasa)\b/i, 'Tech'],
  [/\b(election|elections|president|presidential|senate|congress|parliament|prime minister|governor)\b/i, 'Politics'],
];

/**
 * Lower case, trimmed, runs of spaces/underscores as one dash: `"Pop Culture"` → `pop-culture`,
 * `"Premier League"` → `premier-league`, so labels match the slug table.
 */
function normaliseTag(value: string | null | undefined): string | null {
  if (typeof value !== 'string') return null;
  const normalised = value.trim().toLowerCase().replace(/[\s_]+/g, '-');
  return normalised === '' ? null : normalised;
}

function rank(category: Category): number {
  return CATEGORY_PRIORITY.indexOf(category);
}

function bestLeague(candidates: readonly LeagueDefinition[]): LeagueDefinition | null {
  let best: LeagueDefinition | null = null;
  // Strictly better only, so among equal categories the first tag listed wins.
  for (const league of candidates) if (best === null || rank(league.category) < rank(best.category)) best = league;
  return best;
}

/** A league named by a series slug such as `nba-2026`, `premier-league-2025-26` or `epl`. */
function leagueFromSeries(seriesSlug: string | null | undefined): LeagueDefinition | null {
  const slug = normaliseTag(seriesSlug);
  if (slug === null) return null;
  const padded = `-${slug}-`;
  const found: LeagueDefinition[] = [];
  for (const [alias, league] of leagueByAlias) if (padded.includes(`-${alias}-`)) found.push(league);
  return bestLeague(found);
}

/**
 * Category and league (or coin) key of a catalog event.
 *
 * Signals, most specific first:
 * 0. the league the exchange's sports list (`GET /sports`) gives the event (`exchangeLeague`, its
 *    `sport` key) — the exchange's own word: a key our table knows (`lal` → laliga); an unknown one
 *    (`mlp`) is kept as it is, in Sport (Football with a `soccer` tag), never null;
 * 1. a tag naming a known league or coin (`epl`, `nfl`, `bitcoin`, …) — so `sports, football, nfl`
 *    is Sport/nfl and a `politics` + `bitcoin` event is Crypto/btc; when several do, the one whose
 *    category ranks first in the order below, then the first tag listed;
 * 2. a league named by the event's series slug (`nba-2026`);
 * 3. a generic category tag (`soccer` → Football with league null, `sports` → Sport, `fed` →
 *    Economy, …); when tags disagree, the order Football, Sport, Crypto, Economy, Tech, Politics,
 *    Culture decides;
 * 4. only when the tags say nothing we recognise (null, empty or unknown tags): the title —
 *    a league or coin word ("Bitcoin" → Crypto/btc), then `hasGame` (a match is a sport: Sport),
 *    then category words ("election" → Politics, "Fed" → Economy, "AI" → Tech);
 * 5. otherwise Culture with league null: the catch-all bucket, least likely to mislead.
 */
export function classifyEvent(input: {
  tags: Array<{ slug?: string | null; label?: string | null }> | null | undefined;
  title: string;
  seriesSlug?: string | null;
  hasGame?: boolean;
  /** The `sport` key of the event's league in the exchange's sports list, when one matched. */
  exchangeLeague?: string | null;
}): { category: Category; league: string | null } {
  const exchangeKey = normaliseTag(input.exchangeLeague);
  const exchangeKnown = exchangeKey === null ? undefined : leagueByAlias.get(exchangeKey);
  if (exchangeKnown !== undefined) return { category: exchangeKnown.category, league: exchangeKnown.key };
  const leagues: LeagueDefinition[] = [];
  let tagCategory: Category | null = null;
  for (const tag of input.tags ?? []) {
    for (const name of [normaliseTag(tag.slug), normaliseTag(tag.label)]) {
      if (name === null) continue;
      const league = leagueByAlias.get(name);
      if (league !== undefined) leagues.push(league);
      const category = categoryByTag.get(name);
      if (category !== undefined && (tagCategory === null || rank(category) < rank(tagCategory))) tagCategory = category;
    }
  }

  // A league the exchange lists and our table does not: kept under its own key.
  if (exchangeKey !== null) return { category: tagCategory === 'Football' ? 'Football' : 'Sport', league: exchangeKey };
  const league = bestLeague(leagues) ?? leagueFromSeries(input.seriesSlug);
  if (league !== null) return { category: league.category, league: league.key };
  if (tagCategory !== null) return { category: tagCategory, league: null };
  return classifyTitle(input.title, input.hasGame === true);
}

function classifyTitle(title: string, hasGame: boolean): { category: Category; league: string | null } {
  const text = typeof title === 'string' ? title : '';
  for (const [pattern, key] of TITLE_LEAGUES) {
    const league = leagueByKey.get(key);
    if (league !== undefined && pattern.test(text)) return { category: league.category, league: league.key };
  }
  if (hasGame) return { category: 'Sport', league: null };
  for (const [pattern, category] of TITLE_CATEGORIES) if (pattern.test(text)) return { category, league: null };
  return { category: FALLBACK_CATEGORY, league: null };
}

/**
 * Human label of a league or coin key: `epl` → "EPL", `laliga` → "La Liga", `btc` → "Bitcoin".
 * Unknown keys are shown upper-cased, which reads right for the usual acronym keys.
 */
export function leagueLabel(key: string): string {
  return leagueByKey.get(key.toLowerCase())?.label ?? key.toUpperCase();
}
