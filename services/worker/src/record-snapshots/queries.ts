import { greaterThan, sql, tables, type Calls, type Queryable } from '@pm/shared/db';

/**
 * The record snapshot builder's other reads: which ids a full build pages through, and what a set of
 * dirty records touches. Set-based, one statement for any number of ids (`= any($ids)`); bigint ids
 * come back as numbers (createDb's bigIntMode).
 */

/** The next user ids after `after`, in id order, `batch` of them (full builds page with it). */
export async function userIdsAfter(db: Queryable, after: number, batch: number): Promise<string[]> {
  const rows = await tables.users(db).find({ id: greaterThan(after) }).orderByAsc('id').select('id').limit(batch);
  return rows.map((r) => String(r.id));
}

/** inputs: a market id to start after and a batch size. outputs: the next called market ids in id order. */
export async function calledMarketIdsAfter(db: Queryable, after: string, batch: number): Promise<string[]> {
  const rows = await db.query(sql`
    select distinct market_id from calls where market_id > ${after} order by market_id limit ${batch}
  `);
  return rows.map((r: Pick<Calls, 'market_id'>) => r.market_id);
}

/**
 * What else a set of dirty records touches.
 * inputs: dirty call ids, user ids, market ids.
 * outputs: calls whose single-call snapshot to rebuild (the dirty ones, and every call on a dirty
 *   market that has resolved: settlement changed them all), users whose record to rebuild (the
 *   dirty ones only), users whose call lists to rebuild (the owners of those calls, dirty people
 *   without any call — a new person's empty lists — and the `lists:<id>` members), and markets
 *   whose call list to rebuild (the dirty ones and those of the dirty calls).
 * A person's lists change only with their calls: the owner of a combo a settlement decided has a
 * new record (xp) but the same lists, and making those again cost as much as the callers' lists.
 * People are not inferred from calls or markets: every change to a person's record or lists also
 * makes their user_records stale (the write path and settlement call projectionStale for the
 * author, a copied call's author, the callers and combo owners of a settled market), and the
 * projection job marks `user:<id>` once that row is current. Inferring them here as well rebuilt
 * every caller of a settled market twice — first with the record not yet projected.
 */
export async function expandDirty(
  db: Queryable,
  dirty: { calls: readonly string[]; users: readonly string[]; markets: readonly string[]; lists?: readonly string[] },
): Promise<{ calls: string[]; users: string[]; markets: string[]; lists: string[] }> {
  const rows = await db.query(sql`
    with dc as (
      select id, market_id from calls where id = any(${[...dirty.calls]}::text[])
    ), resolved as (
      select id from markets where id = any(${[...dirty.markets]}::text[]) and (resolved_at is not null or closed)
    ), settled as (
      select c.id, c.user_id from calls c where c.market_id in (select id from resolved)
    )
    select 'call' as kind, id from dc
    union select 'call', id from settled
    union select 'user', u.id::text from users u where u.id = any(${dirty.users.map(Number)}::bigint[])
    union select 'market', market_id from dc
    union select 'market', m.id from markets m where m.id = any(${[...dirty.markets]}::text[])
    -- Lists show calls: those of the changed calls' owners changed; a person without calls has
    -- (empty) lists to make once; a lists:<id> member asks for them by name.
    union select 'lists', c.user_id::text from calls c where c.id in (select id from dc)
    union select 'lists', user_id::text from settled
    union select 'lists', u.id::text from users u
      where u.id = any(${dirty.users.map(Number)}::bigint[]) and not exists (select 1 from calls c where c.user_id = u.id)
    union select 'lists', u.id::text from users u where u.id = any(${(dirty.lists ?? []).map(Number)}::bigint[])
  `);
  const out = { calls: [] as string[], users: [] as string[], markets: [] as string[], lists: [] as string[] };
  for (const r of rows as Array<{ kind: 'call' | 'user' | 'market' | 'lists'; id: string }>) {
    if (r.kind === 'call') out.calls.push(r.id);
    else if (r.kind === 'user') out.users.push(r.id);
    else if (r.kind === 'lists') out.lists.push(r.id);
    else out.markets.push(r.id);
  }
  return out;
}
