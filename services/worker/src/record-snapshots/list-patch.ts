import type { Redis } from 'ioredis';
import { CALL_LIST_SIZE, USER_CALL_FILTERS, type UserCallFilter } from '@pm/shared/api';
import { ANNOUNCE_BATCH, redisKeys } from '@pm/shared/redis';
import { recordJson, sql, type Queryable } from '@pm/shared/db';

/**
 * A big change's people's call lists, patched where they are (issue 18: a 10,000-call settlement's
 * callers' five lists are ~165 MB of JSON text; made again in Postgres they took ~6 s, where the
 * change itself is ~4 MB: each settled call's new Call object).
 *
 * Postgres says, per changed call, its Call object (as record_call_json has it), its status, and where it now stands in its owner's lists (`kAll`: how many of their calls
 * are newer; `kStatus`: how many of that status are), and per person how long each list now is.
 * One script call per batch of people then, in Redis, for each of their five lists:
 *   - removes the changed calls from every list of another status (the `open` list of a settled call);
 *   - replaces them in `all` and in their status's list, or inserts them there at their position;
 *   - keeps the first CALL_LIST_SIZE;
 * and checks the result against Postgres: every list as long as Postgres says it now is, every
 * changed call at the position Postgres gives it. A person whose lists do not check out (a list
 * missing from Redis, one that was behind, a full list that lost a call and would need the next one
 * from Postgres) is left untouched and returned: the builder makes their lists from Postgres. The
 * written lists are the same text the build would make (list bodies are the cached Call objects
 * joined with commas, bodies.ts userBodies), with the same ETag (snapshotEtag: base64url of the
 * SHA-1, in Lua from redis.sha1hex), written and announced the way the bulk writer does.
 * The builder still remakes the patched people's lists from Postgres afterwards (`lists:<id>`, a
 * build of its own): Postgres stays the record and a patch only brings the lists forward.
 */

export interface ListPatchCall {
  id: string;
  status: Exclude<UserCallFilter, 'all'>;
  /** The call's Call object (record_call_json). */
  body: string;
  /** Calls of the owner newer than this one (its index in `all`). */
  kAll: number;
  /** Calls of the owner of the same status newer than this one (its index in that list). */
  kStatus: number;
}

export interface ListPatchUser {
  userId: string;
  /** Lower-cased, as in the snapshot names. */
  key: string;
  /** How many calls each list would hold without its limit. */
  counts: Record<UserCallFilter, number>;
  calls: ListPatchCall[];
}

/**
 * inputs: call ids, those of them whose Call object was cached before this build (`cachedCallIds`),
 * the public web url. outputs: their owners, each with those calls (their Call object made as
 * record_call_json's) and what ListPatchUser says; a call not cached before (a new call) leaves its
 * owner with no calls to patch: their lists are made from Postgres after the calls' own pages.
 */
export async function listPatches(db: Queryable, callIds: readonly string[], cached: readonly string[], webUrl: string): Promise<ListPatchUser[]> {
  if (callIds.length === 0) return [];
  const rows: Array<{
    user_id: string;
    key: string;
    id: string;
    status: ListPatchCall['status'];
    body: string | null;
    k_all: number;
    k_status: number;
    n_all: number;
    n_open: number;
    n_won: number;
    n_lost: number;
    n_void: number;
  }> = await db.query(sql`
    with t as (
      select c.id, c.user_id, c.status, c.made_at from calls c where c.id = any(${[...callIds]}::text[])
    ), counts as (
      select o.user_id, n.*
      from (select distinct user_id from t) o cross join lateral (
        select count(*)::integer as n_all,
               count(*) filter (where c.status = 'open')::integer as n_open,
               count(*) filter (where c.status = 'won')::integer as n_won,
               count(*) filter (where c.status = 'lost')::integer as n_lost,
               count(*) filter (where c.status = 'void')::integer as n_void
        from calls c where c.user_id = o.user_id
      ) n
    )
    select t.user_id::text as user_id, lower(u.handle) as key, t.id, t.status,
           -- The call's object made here (as refreshCallJson makes it, at the same time), for a call
           -- whose object was cached before: a call without one is new, and its lists wait for its own page.
           case when t.id = any(${[...cached]}::text[]) then ${recordJson.callObject(webUrl)} end as body,
           -- Index-only ranges of calls_user_newest_cover / calls_user_status_newest (row comparison in the key).
           (select count(*) from calls x where x.user_id = t.user_id and (x.made_at, x.id) > (t.made_at, t.id))::integer as k_all,
           (select count(*) from calls x where x.user_id = t.user_id and x.status = t.status and (x.made_at, x.id) > (t.made_at, t.id))::integer as k_status,
           n.n_all, n.n_open, n.n_won, n.n_lost, n.n_void
    from t
    join calls c on c.id = t.id
    ${recordJson.CALL_JOINS}
    join counts n on n.user_id = t.user_id
  `);
  const users = new Map<string, ListPatchUser & { complete: boolean }>();
  for (const r of rows) {
    let user = users.get(r.user_id);
    if (!user) {
      user = { userId: r.user_id, key: r.key, counts: { all: r.n_all, open: r.n_open, won: r.n_won, lost: r.n_lost, void: r.n_void }, calls: [], complete: true };
      users.set(r.user_id, user);
    }
    // A call without its cached object cannot be patched in: that person's lists are made whole.
    if (r.body === null) user.complete = false;
    else user.calls.push({ id: r.id, status: r.status, body: r.body, kAll: r.k_all, kStatus: r.k_status });
  }
  return [...users.values()].map(({ complete, ...user }) => (complete ? user : { ...user, calls: [] }));
}

/** inputs: call ids. outputs: those whose Call object is cached (record_call_json; each has its own page). */
export async function cachedCallIds(db: Queryable, callIds: readonly string[]): Promise<string[]> {
  if (callIds.length === 0) return [];
  const rows: Array<{ call_id: string }> = await db.query(sql`select call_id from record_call_json where call_id = any(${[...callIds]}::text[])`);
  return rows.map((r) => r.call_id);
}

/**
 * KEYS: per person their five list snapshots (USER_CALL_FILTERS order), then the family built-at hash.
 * ARGV: built_at, channel, people, list size, then per person: key, the five counts, the number of
 * calls, and per call id, status, body, kAll, kStatus.
 * Returns: the number of lists written, then the (1-based) positions of the people left untouched.
 */
const PATCH_LISTS = `
local FILTERS = {${USER_CALL_FILTERS.map((f) => `'${f}'`).join(', ')}}
local B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
local builtAt, channel = ARGV[1], ARGV[2]
local people, size = tonumber(ARGV[3]), tonumber(ARGV[4])
local HEAD, BOUNDARY = ',"calls":[', ',{"id":"'
local find, sub = string.find, string.sub

local function b64(v, n)
  local out = {}
  for i = n, 1, -1 do
    local d = v % 64
    out[i] = sub(B64, d + 1, d + 1)
    v = math.floor(v / 64)
  end
  return table.concat(out)
end
-- snapshotEtag: the quoted first 27 characters of the SHA-1's base64url.
local function etagOf(body)
  local hex = redis.sha1hex(body)
  local out = {}
  for i = 1, 31, 6 do out[#out + 1] = b64(tonumber(sub(hex, i, i + 5), 16), 4) end
  out[#out + 1] = b64(tonumber(sub(hex, 37, 40), 16) * 4, 3)
  return '"' .. table.concat(out) .. '"'
end

-- A list body is HEAD-terminated head, then items joined by ',', then ']}'; an item (a Call object)
-- starts '{"id":"<id>","user":' (nothing inside one does: a copied_from is '{"id":…,"handle":').
-- Positions: 'first' is where the first item starts (or the ']' of an empty list); an item ends
-- before the next BOUNDARY or at the closing ']' (#body - 1).
local function itemStart(id) return '{"id":"' .. id .. '","user":' end
local function itemEnd(body, at)
  local nxt = find(body, BOUNDARY, at + 1, true)
  if nxt then return nxt - 1, nxt + 1 end
  return #body - 2, nil
end
-- Start of the item at 0-based index k, or nil when the list has k items or fewer; also the count when walked to the end.
local function startOf(body, first, k)
  if k == 0 then return (first <= #body - 2) and first or nil end
  local at, i = first, 0
  if at > #body - 2 then return nil, 0 end
  while i < k do
    local _, nxt = itemEnd(body, at)
    if not nxt then return nil, i + 1 end
    at, i = nxt, i + 1
  end
  return at
end
local function count(body, first)
  local _, n = startOf(body, first, size + 1)
  return n or (size + 1)
end

local written, untouched, announced = 0, {}, {}
local p = 5
for u = 1, people do
  local key = ARGV[p]
  local counts = {}
  for f = 1, 5 do counts[f] = tonumber(ARGV[p + f]) end
  local m = tonumber(ARGV[p + 6])
  p = p + 7
  local calls = {}
  for c = 1, m do
    calls[c] = { id = ARGV[p], status = ARGV[p + 1], body = ARGV[p + 2], kAll = tonumber(ARGV[p + 3]), kStatus = tonumber(ARGV[p + 4]), start = itemStart(ARGV[p]) }
    p = p + 5
  end
  local ok = m > 0
  local writes = {}
  for f = 1, 5 do
    if not ok then break end
    local filter = FILTERS[f]
    -- A list of another status is read only when a call may be in it: its status before, as the
    -- 'all' list (read first) showed it, or any when that list did not show the call.
    local needed = filter == 'all'
    for _, c in ipairs(calls) do
      if c.status == filter or c.was == nil or c.was == filter then needed = true end
    end
    if needed then
      local k = KEYS[(u - 1) * 5 + f]
      local body = redis.call('HGET', k, 'body')
      if not body then ok = false break end
      if filter == 'all' then
        for _, c in ipairs(calls) do
          local s = find(body, c.start, 1, true)
          if s then
            local a = find(body, '"status":"', s, true)
            if a then c.was = sub(body, a + 10, find(body, '"', a + 10, true) - 1) end
          end
        end
      end
      local head = find(body, HEAD, 1, true)
      if not head or sub(body, -2) ~= ']}' then ok = false break end
      local first = head + #HEAD
      local mine, gone = {}, {}
      for _, c in ipairs(calls) do
        if filter == 'all' then mine[#mine + 1] = { c = c, at = c.kAll }
        elseif c.status == filter then mine[#mine + 1] = { c = c, at = c.kStatus }
        elseif find(body, c.start, first, true) then gone[#gone + 1] = c end
      end
      if #mine > 0 or #gone > 0 then
        local original = body
        local full = count(body, first) >= size
        -- The calls of another status leave this list (a full list would need the next one from Postgres).
        if #gone > 0 and full then ok = false break end
        for _, c in ipairs(gone) do
          local s = find(body, c.start, first, true)
          local e, nxt = itemEnd(body, s)
          if nxt then body = sub(body, 1, s - 1) .. sub(body, nxt)
          elseif s > first then body = sub(body, 1, s - 2) .. ']}'
          else body = sub(body, 1, s - 1) .. ']}' end
        end
        -- Those of this list's status take their place, in position order: replaced, or inserted.
        table.sort(mine, function(a, b) return a.at < b.at end)
        for _, x in ipairs(mine) do
          local s = find(body, x.c.start, first, true)
          if s then
            local e = itemEnd(body, s)
            body = sub(body, 1, s - 1) .. x.c.body .. sub(body, e + 1)
          elseif x.at < size then
            local s2 = startOf(body, first, x.at)
            if s2 then body = sub(body, 1, s2 - 1) .. x.c.body .. ',' .. sub(body, s2)
            elseif first > #body - 2 then
              if x.at ~= 0 then ok = false break end
              body = sub(body, 1, first - 1) .. x.c.body .. ']}'
            else
              if count(body, first) ~= x.at then ok = false break end
              body = sub(body, 1, #body - 2) .. ',' .. x.c.body .. ']}'
            end
          end
        end
        if not ok then break end
        -- Keep the first 'size'.
        local over = startOf(body, first, size)
        if over then body = sub(body, 1, over - 2) .. ']}' end
        -- As Postgres has it: the list's length, and each call where it stands.
        if count(body, first) ~= math.min(size, counts[f]) then ok = false break end
        for _, x in ipairs(mine) do
          if x.at < size then
            local s = startOf(body, first, x.at)
            if not s or sub(body, s, s + #x.c.start - 1) ~= x.c.start then ok = false break end
          end
        end
        if not ok then break end
        if body ~= original then writes[#writes + 1] = { key = k, name = 'user-calls:' .. key .. ':' .. filter, body = body } end
      end
    end
  end
  if ok then
    for _, w in ipairs(writes) do
      local etag = etagOf(w.body)
      redis.call('HSET', w.key, 'body', w.body, 'etag', etag, 'built_at', builtAt)
      announced[#announced + 1] = { name = w.name, etag = etag }
      written = written + 1
    end
  else
    untouched[#untouched + 1] = u
  end
end
if #announced > 0 then
  redis.call('HSET', KEYS[#KEYS], 'user-calls', builtAt)
  local batch = {}
  for i = 1, #announced do
    batch[#batch + 1] = announced[i]
    if #batch == ${ANNOUNCE_BATCH} or i == #announced then
      redis.call('PUBLISH', channel, cjson.encode(batch))
      batch = {}
    end
  end
end
local out = { written }
for _, u in ipairs(untouched) do out[#out + 1] = u end
return out
`;

type WithScript = Redis & { pmPatchUserCallLists(...args: Array<string | number>): Promise<number[]> };

export interface ListPatcher {
  /** Patches these people's lists; resolves to how many lists were written and whom it left untouched (user ids). */
  patch(users: readonly ListPatchUser[]): Promise<{ written: number; untouched: string[] }>;
}

export function createListPatcher(deps: { redis: Redis; prefix: string; now: () => number; batch?: number }): ListPatcher {
  const keys = redisKeys(deps.prefix);
  const batch = deps.batch ?? 100;
  if (!('pmPatchUserCallLists' in deps.redis)) deps.redis.defineCommand('pmPatchUserCallLists', { lua: PATCH_LISTS });
  const redis = deps.redis as unknown as WithScript;
  async function one(users: readonly ListPatchUser[]): Promise<{ written: number; untouched: string[] }> {
    const listKeys: string[] = [];
    const args: Array<string | number> = [String(deps.now()), keys.snapshotAnnounce, users.length, CALL_LIST_SIZE];
    for (const u of users) {
      for (const f of USER_CALL_FILTERS) listKeys.push(keys.snapshot(`user-calls:${u.key}:${f}`));
      args.push(u.key, ...USER_CALL_FILTERS.map((f) => u.counts[f]), u.calls.length);
      for (const c of u.calls) args.push(c.id, c.status, c.body, c.kAll, c.kStatus);
    }
    const [written = 0, ...left] = await redis.pmPatchUserCallLists(listKeys.length + 1, ...listKeys, keys.snapshotBuiltAt, ...args);
    return { written, untouched: left.map((i) => users[i - 1]!.userId) };
  }
  return {
    async patch(users) {
      // One script call at a time: a script holds Redis while it runs (tens of milliseconds per
      // batch), and sent all at once they held the API's reads back past its 1 s timeout (503s).
      const out = { written: 0, untouched: [] as string[] };
      for (let i = 0; i < users.length; i += batch) {
        const done = await one(users.slice(i, i + batch));
        out.written += done.written;
        out.untouched.push(...done.untouched);
      }
      return out;
    },
  };
}
