/**
 * The demo crowd's people: fixed, so a restart finds the same handles and reuses them. About a third
 * have no avatar (docs/api.md: `avatar` is nullable), bios are short, interests are categories or
 * "Category: League" (the write path canonicalises them).
 */
export interface Persona {
  handle: string;
  displayName: string;
  bio: string;
  interests: string[];
  /** Null for people without a picture. */
  avatar: string | null;
}

const avatar = (handle: string) => `https://api.dicebear.com/9.x/thumbs/svg?seed=${handle}`;

const PEOPLE: ReadonlyArray<[string, string, string, string[], boolean]> = [
  ['xg_merchant', 'Priya Natarajan', 'Expected goals or it did not happen.', ['Football', 'Football: EPL'], true],
  ['lowblock', 'Tomás Ferreira', 'Defence wins titles. Unders forever.', ['Football: La Liga', 'Football: Champions League'], true],
  ['satoshi_nope', 'Dana Whitfield', 'Five-minute candles are my cardio.', ['Crypto', 'Crypto: Bitcoin'], false],
  ['gwei_watcher', 'Lukas Brandt', 'On-chain first, narratives second.', ['Crypto: Ethereum', 'Tech'], true],
  ['fedspeak', 'Margaret Osei', 'Reads every FOMC statement twice.', ['Economy', 'Politics'], true],
  ['swingstate', 'Jamal Carter', 'Polls are a vibe; turnout is a number.', ['Politics'], false],
  ['pressing_game', 'Sofia Lindqvist', 'High line, higher conviction.', ['Football: Bundesliga', 'Football'], true],
  ['clutch_factor', 'Marcus Bell', 'Fourth quarter is where lines are wrong.', ['Sport: NBA', 'Sport'], true],
  ['redzone_rita', 'Rita Gómez', 'Sunday is for spreads.', ['Sport: NFL'], false],
  ['calm_bayesian', 'Wei Zhang', 'Update small, update often.', ['Economy', 'Tech', 'Politics'], true],
  ['tifosi_tom', 'Tommaso Ricci', 'Forza. Also, the under.', ['Football: Serie A'], true],
  ['moonshot_max', 'Max Okafor', 'Long shots are just early favourites.', ['Crypto', 'Culture'], false],
  ['chip_cycle', 'Hana Kobayashi', 'Semis, models and release dates.', ['Tech'], true],
  ['boxoffice', 'Chloe Martin', 'Opening weekends and award seasons.', ['Culture'], true],
  ['set_piece', 'Kwame Mensah', 'Corners are underrated.', ['Football', 'Football: MLS'], false],
  ['macro_mia', 'Mia Rossi', 'Rates, prints and the dollar.', ['Economy', 'Crypto'], true],
  ['ballot_box', 'Henry Adeyemi', 'Elections nerd since 2008.', ['Politics', 'Culture'], true],
  ['nightcap_nba', 'Jordan Price', 'West coast tip-offs, east coast sleep.', ['Sport: NBA'], false],
  ['false_nine', 'Elena Petrova', 'Watches the space, not the ball.', ['Football: EPL', 'Football: Champions League'], true],
  ['halving_hank', 'Hank Sorensen', 'Four-year cycles, five-minute trades.', ['Crypto: Bitcoin'], true],
  ['stat_padder', 'Aisha Rahman', 'Small edges, many calls.', ['Sport', 'Football'], false],
  ['contrarian_cat', 'Catalina Vega', 'If everyone agrees, I fade.', ['Politics', 'Crypto', 'Football'], true],
  ['deep_lying', 'Oliver Grant', 'Tempo controller, patience merchant.', ['Football: La Liga'], true],
  ['gas_fees', 'Noah Levi', 'Ethereum maximalist with a Solana bag.', ['Crypto: Ethereum', 'Crypto: Solana'], false],
  ['gridiron_gus', 'Gus Miller', 'Trenches decide games.', ['Sport: NFL', 'Sport'], true],
  ['quiet_quant', 'Ingrid Holm', 'Spreadsheets over storylines.', ['Economy', 'Sport'], true],
  ['pop_oracle', 'Leila Haddad', 'Charts, streams and red carpets.', ['Culture', 'Tech'], false],
  ['keeper_sweeper', 'Diego Alvarez', 'Clean sheets are a lifestyle.', ['Football', 'Football: Ligue 1'], true],
  ['the_under_guy', 'Sam Whitaker', 'Never met an under I did not like.', ['Football', 'Sport'], true],
  ['early_ender', 'Yuki Tanaka', 'First call of the day, every day.', ['Crypto', 'Economy', 'Football'], false],
];

export const PERSONAS: readonly Persona[] = PEOPLE.map(([handle, displayName, bio, interests, hasAvatar]) => ({
  handle,
  displayName,
  bio,
  interests,
  avatar: hasAvatar ? avatar(handle) : null,
}));
