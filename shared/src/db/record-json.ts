import { sql } from './connection.js';

/**
 * docs/api.md's record resources (Call, Combo with its legs, Leaderboard row) as JSON text made in
 * Postgres: the one definition the worker's record snapshots (services/worker/src/record-snapshots/
 * bodies.ts) and the API's pages past the first (services/api/src/pages/) both build from, so a call
 * on page 3 is byte for byte the call the first page (a snapshot) shows.
 *
 * A body is what `JSON.stringify` makes of the resource: same key order, compact, ISO timestamps
 * with milliseconds via `pm_iso`, links via `pm_uri_component` (migration 0003). Numbers print as
 * float8 does (with the default extra_float_digits = 1): the shortest round-trip digits, as
 * JavaScript; only a value below 1e-4 would differ in form (5e-05 for 0.00005), never in value.
 *
 * Objects are concatenated text with their keys in docs/api.md's order (jsonObject); lists are
 * `string_agg` of those objects (json_agg would add spaces).
 */

export type Fragment = ReturnType<typeof sql>;

/** `[a,b,…]` of the JSON text `item` in `order`, `[]` for none (json_agg would add spaces). */
export const jsonList = (item: Fragment, order: Fragment): Fragment => sql`coalesce('[' || string_agg(${item}, ',' order by ${order}) || ']', '[]')`;

/**
 * `{"k1":v1,"k2":v2,…}` by concatenation: keys in the order given, each value already JSON text
 * (the helpers below). About twice as fast per row as row_to_json of a sub-select, whose sub-plan
 * is started per row. Keys are code constants, checked, never input.
 */
export function jsonObject(fields: ReadonlyArray<readonly [string, Fragment]>): Fragment {
  const parts = fields.map(([key, value], i) => {
    if (!/^[a-z_0-9]+$/.test(key)) throw new Error(`bad JSON key ${key}`);
    return sql`${sql.__dangerous__rawValue(`'${i === 0 ? '{' : ','}"${key}":'`)} || ${value}`;
  });
  return sql`(${sql.join(parts, sql` || `)} || '}')`;
}
/** JSON text of a text value (escaped as JSON.stringify escapes it) or of null. */
export const text = (v: Fragment): Fragment => sql`coalesce(to_json((${v})::text)::text, 'null')`;
/** JSON text of a number (float8 prints the shortest round-trip form, as JavaScript does) or of null. */
export const num = (v: Fragment): Fragment => sql`coalesce((${v})::float8::text, 'null')`;
/** JSON text of an integer or a boolean. */
export const plain = (v: Fragment): Fragment => sql`(${v})::text`;
/** JSON text of a timestamp as Date#toISOString prints it, or of null. */
export const iso = (v: Fragment): Fragment => sql`coalesce('"' || pm_iso(${v}) || '"', 'null')`;
/** JSON text of a public link. */
export const link = (webUrl: string, path: string, id: Fragment): Fragment => text(sql`${webUrl}::text || ${path}::text || pm_uri_component(${id})`);

/** The joins every call object needs; `c` is the call. */
export const CALL_JOINS = sql`
  join users u on u.id = c.user_id
  join markets m on m.id = c.market_id
  join events e on e.id = m.event_id
  join outcomes o on o.market_id = c.market_id and o.outcome_index = c.outcome_index
`;

/**
 * The pick of a call or a combo leg, as docs/api.md lists it in both: the market, its event's slug, the
 * question, the outcome and the chance it was made at. `pick` is the call or leg (market_id,
 * outcome_index, chance_at_call); `market`, `event`, `outcome` the rows joined to it.
 */
const pickFields = (aliases: { pick: string; market: string; event: string; outcome: string }) =>
  [
    ['market_id', text(sql.ident(aliases.pick, 'market_id'))],
    ['event', text(sql.ident(aliases.event, 'slug'))],
    ['question', text(sql.ident(aliases.market, 'question'))],
    ['outcome', text(sql.ident(aliases.outcome, 'name'))],
    ['outcome_index', plain(sql.ident(aliases.pick, 'outcome_index'))],
    ['chance_at_call', num(sql.ident(aliases.pick, 'chance_at_call'))],
  ] as const;

/** `{"handle":…}` of the owner `u` (users) of a combo or of the single-call body. */
export const OWNER_HANDLE = jsonObject([['handle', text(sql`u.handle`)]]);

/** `profit_on_10` is null while open. */
export const CALL_PROFIT = sql`case when c.status <> 'open' then c.profit_on_10 end`;

/**
 * docs/api.md's Call as JSON text (over CALL_JOINS). `copied_from` is `{id, handle}` or null: a missing
 * author would mean a deleted user, and a half object is worse than none.
 */
export const callObject = (webUrl: string): Fragment =>
  jsonObject([
    ['id', text(sql`c.id`)],
    ['user', jsonObject([['handle', text(sql`u.handle`)], ['avatar', text(sql`u.avatar`)]])],
    ...pickFields({ pick: 'c', market: 'm', event: 'e', outcome: 'o' }),
    ['thesis', text(sql`c.thesis`)],
    [
      'copied_from',
      // Looked up by key for the few calls that are copies: a join would hash or scan every call.
      sql`case when c.copied_from is null then 'null' else coalesce((
            select ${jsonObject([['id', text(sql`cc.id`)], ['handle', text(sql`cu.handle`)]])}
            from calls cc join users cu on cu.id = cc.user_id where cc.id = c.copied_from
          ), 'null') end`,
    ],
    ['is_fade', plain(sql`c.is_fade`)],
    ['status', text(sql`c.status`)],
    ['profit_on_10', num(CALL_PROFIT)],
    ['made_at', iso(sql`c.made_at`)],
    ['settled_at', iso(sql`c.settled_at`)],
    ['url', link(webUrl, '/c/', sql`c.id`)],
  ]);

/**
 * docs/api.md's Combo as JSON text, over `k` (combos) and `u` (its owner, users): its legs in leg order,
 * each with its event's slug (docs/design.md "Links"), read by the combo's key (at most six legs).
 */
export const comboObject = (webUrl: string): Fragment =>
  jsonObject([
    ['id', text(sql`k.id`)],
    ['user', OWNER_HANDLE],
    ['chance', num(sql`k.chance`)],
    ['wins_on_10', num(sql`k.wins_on_10`)],
    ['status', text(sql`k.status`)],
    ['xp_awarded', plain(sql`k.xp_awarded`)],
    [
      'legs',
      sql`(
        select ${jsonList(
          jsonObject([
            ...pickFields({ pick: 'g', market: 'gm', event: 'ge', outcome: 'go' }),
            ['status', text(sql`g.status`)],
          ]),
          sql`g.leg_index`,
        )}
        from combo_legs g
        join markets gm on gm.id = g.market_id
        join events ge on ge.id = gm.event_id
        join outcomes go on go.market_id = g.market_id and go.outcome_index = g.outcome_index
        where g.combo_id = k.id
      )`,
    ],
    ['made_at', iso(sql`k.made_at`)],
    ['url', link(webUrl, '/combo/', sql`k.id`)],
  ]);

/** docs/api.md's Leaderboard row as JSON text, over `l` (rank), `u` (users) and `r` (user_records, null: zeros). */
export const leaderboardRowObject = (counted = 'r', whole = 'r'): Fragment => {
  // `counted`: the figures of the board's calls (user_records, or one window's and field's sums
  // with the same column names); `whole`: the person's record (profit_7d and streak).
  const c = (k: string) => sql.ident(counted, k);
  return jsonObject([
    ['rank', plain(sql`l.rank`)],
    ['handle', text(sql`u.handle`)],
    ['display_name', text(sql`u.display_name`)],
    ['avatar', text(sql`u.avatar`)],
    ...(['right_pct', 'settled', 'won'] as const).map((k) => [k, plain(sql`coalesce(${c(k)}, 0)`)] as const),
    ['profit_on_10', num(sql`coalesce(${c('profit_on_10')}, 0)`)],
    ['profit_7d', num(sql`coalesce(${sql.ident(whole, 'profit_7d')}, 0)`)],
    ['xp', plain(sql`coalesce(${c('xp')}, 0)`)],
    ['streak', plain(sql`coalesce(${sql.ident(whole, 'streak')}, 0)`)],
    ['clv', num(skillClv(counted))],
    ['brier', num(skillBrier(counted))],
  ]);
};

/** A record's (or a board row's) clv from its sums (docs/skill.md): mean, 4 places; null without a call with a closing chance. */
export const skillClv = (a: string): Fragment => sql`case when ${sql.ident(a, 'clv_calls')} > 0 then round(${sql.ident(a, 'clv_sum')} / ${sql.ident(a, 'clv_calls')}, 4) end`;
/** Its brier: mean Brier term over won and lost calls, 4 places; null without one. */
export const skillBrier = (a: string): Fragment =>
  sql`case when ${sql.ident(a, 'won')} + ${sql.ident(a, 'lost')} > 0 then round(${sql.ident(a, 'brier_sum')} / (${sql.ident(a, 'won')} + ${sql.ident(a, 'lost')}), 4) end`;

/**
 * The body of `GET /calls/{id}` over `c` (calls) with CALL_JOINS: `{"call":…}`, docs/api.md's call
 * subset with its thesis updates, oldest first, from `tu.list` (thesisUpdateLists; null: none).
 */
export const callPageBody = (webUrl: string): Fragment => sql`'{"call":' || ${jsonObject([
  ['id', text(sql`c.id`)],
  ['user', OWNER_HANDLE],
  ['question', text(sql`m.question`)],
  ['outcome', text(sql`o.name`)],
  ['chance_at_call', num(sql`c.chance_at_call`)],
  ['status', text(sql`c.status`)],
  ['profit_on_10', num(CALL_PROFIT)],
  ['thesis', text(sql`c.thesis`)],
  ['thesis_updates', sql`coalesce(tu.list, '[]')`],
  ['url', link(webUrl, '/c/', sql`c.id`)],
])} || '}'`;

/** `tu.list` of callPageBody: the thesis updates of the calls `which` (a condition on `t`), one grouped pass. */
export const thesisUpdateLists = (which: Fragment): Fragment => sql`
  select t.call_id, ${jsonList(jsonObject([['body', text(sql`t.body`)], ['at', iso(sql`t.at`)]]), sql`t.at, t.id`)} as list
  from thesis_updates t where ${which} group by t.call_id`;

/** docs/api.md's User record of `u` (users) and `r` (user_records, null for someone not projected yet: zeros). */
export const userRecordObject = (webUrl: string): Fragment =>
  jsonObject([
    ['handle', text(sql`u.handle`)],
    ['display_name', text(sql`u.display_name`)],
    ['avatar', text(sql`u.avatar`)],
    ...(['calls', 'settled', 'won', 'right_pct'] as const).map((k) => [k, plain(sql`coalesce(${sql.ident('r', k)}, 0)`)] as const),
    ['profit_on_10', num(sql`coalesce(r.profit_on_10, 0)`)],
    ['profit_7d', num(sql`coalesce(r.profit_7d, 0)`)],
    ...(['xp', 'streak', 'followers', 'following', 'copies'] as const).map((k) => [k, plain(sql`coalesce(${sql.ident('r', k)}, 0)`)] as const),
    ['bio', text(sql`u.bio`)],
    ['interests', sql`array_to_json(u.interests)::text`],
    ['joined_at', iso(sql`u.joined_at`)],
    ['url', link(webUrl, '/u/', sql`u.handle`)],
  ]);
