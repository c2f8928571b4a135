import { sql, type Db } from '@pm/shared/db';
import { createTestDatabase } from '@pm/shared/testing';

/**
 * Candle tiers at a year's steady state, generated set-based for the benches' storage figures: 1d
 * and 1h candles for 365 days, 5m for 60 days, 1m for 7 days, every slot filled. With `full`, every
 * slot also carries the book top's bid and ask candles and the bucket's trades as a token that
 * trades and whose quotes move every 5 s has them (a trade every 5 s: 12 a minute); without, the
 * chance's candles alone (the tiers as they were before volume and quotes: the baseline). Each
 * row's arrays are one of 1,024 hashed variants: copied, not computed slot by slot; each row is
 * still stored and compressed on its own.
 */

const DAY = 86_400;
const VARIANTS = 1024;

/** A pseudo-random chance in units for (seed, slot): hashed, so arrays compress like real ones. */
const V = (s: string, slot: string) => sql.__dangerous__rawValue(`(3000 + (hashint8((${s})::bigint * 1000003 + (${slot})::bigint) & 4095)::int)`);

/** Candles of one step for series 1..n: periods from firstP to lastP, each with period / step candles. */
export async function generateTier(db: Db, n: number, step: number, period: number, firstP: number, lastP: number, full: boolean): Promise<void> {
  const slots = period / step;
  // Trades a slot at one every 5 s; each of 10-1,033 shares (in 10^-6 share), at the chance's price.
  const tn = step / 5;
  await db.query(sql`drop table if exists bench_variants`);
  await db.query(sql`
    create unlogged table bench_variants as
    select k, a.*
    from generate_series(0, ${VARIANTS - 1}::int) k
    cross join lateral (
      select array_agg(v::smallint order by i) as o, array_agg((v + 40)::smallint order by i) as h, array_agg((v - 40)::smallint order by i) as l,
             array_agg((v + 7)::smallint order by i) as c, array_agg((1 + (v % 12))::int order by i) as n,
             array_agg((v - 50)::smallint order by i) as bo, array_agg((v - 10)::smallint order by i) as bh,
             array_agg((v - 90)::smallint order by i) as bl, array_agg((v - 43)::smallint order by i) as bc,
             array_agg((v + 50)::smallint order by i) as ao, array_agg((v + 90)::smallint order by i) as ah,
             array_agg((v + 10)::smallint order by i) as al, array_agg((v + 57)::smallint order by i) as ac,
             array_agg(${tn}::bigint * (10 + (w & 1023)) * 1000000 + (w & 999999) order by i) as v,
             array_agg(${tn}::float8 * (10 + (w & 1023)) * v / 10000 + (w & 999999)::float8 / 1e6 order by i) as nv,
             array_agg(${tn}::int - (w & 3)::int order by i) as tn
      from (select i, ${V('k', `${step} + i`)} as v, hashint8(k::bigint * 7919 + i) as w from generate_series(0, ${slots - 1}::int) i) x
    ) a
  `);
  const half = Math.floor(n / 2);
  await Promise.all(
    [[1, half], [half + 1, n]].map(([a, b]) =>
      db.query(sql`
        insert into candles (series, step, p, o, h, l, c, n${full ? sql`, bo, bh, bl, bc, ao, ah, al, ac, v, nv, tn` : sql``})
        select s, ${step}::int, p, x.o, x.h, x.l, x.c, x.n${full ? sql`, x.bo, x.bh, x.bl, x.bc, x.ao, x.ah, x.al, x.ac, x.v, x.nv, x.tn` : sql``}
        from generate_series(${a}::int, ${b}::int) s
        cross join generate_series(${firstP}::int, ${lastP}::int, ${period}::int) p
        join bench_variants x on x.k = (hashint8(s::bigint * 1000003 + p) & ${VARIANTS - 1}::bigint)::int
      `),
    ),
  );
  await db.query(sql`drop table bench_variants`);
}

/** Every tier for series 1..n as a year leaves them at `now` (Unix s, on an hour plus 30 minutes). */
export async function generateTiers(db: Db, n: number, now: number, full: boolean, timed: <T>(label: string, work: () => Promise<T>) => Promise<unknown>): Promise<void> {
  const today = Math.floor(now / DAY) * DAY;
  const what = full ? ' with quotes and volume' : '';
  await timed(`1d tier: 365 days${what}`, () => generateTier(db, n, DAY, 64 * DAY, Math.floor((today - 365 * DAY) / (64 * DAY)) * 64 * DAY, today, full));
  await timed(`1h tier: 365 days${what}`, () => generateTier(db, n, 3600, DAY, today - 365 * DAY, today - DAY, full));
  await timed(`5m tier: 60 days${what}`, () => generateTier(db, n, 300, DAY, today - 60 * DAY, today - DAY, full));
  await timed(`1m tier: 7 days${what}`, () => generateTier(db, n, 60, 3600, now - 1_800 - 7 * DAY, now - 1_800 - 3 * 3600, full));
}

/**
 * The tiers' bytes per token (the candles table with its index and TOAST, over n tokens), in all and
 * by tier (shared out by the row bytes of a sample of series).
 */
export async function tierBytes(db: Db, n: number): Promise<{ total: number; byStep: Map<number, number> }> {
  const size: Array<{ bytes: string }> = await db.query(sql`select pg_total_relation_size('candles')::text as bytes`);
  const total = Number(size[0]?.bytes) / n;
  const every = Math.max(1, Math.floor(n / 200));
  const shares: Array<{ step: number; bytes: string }> = await db.query(
    sql`select step, sum(pg_column_size(k.*))::text as bytes from candles k where series % ${every}::int = 0 group by step order by step`,
  );
  const sum = shares.reduce((s, r) => s + Number(r.bytes), 0);
  return { total, byStep: new Map(shares.map((r) => [r.step, (total * Number(r.bytes)) / sum])) };
}

export const TIER_NAMES: Readonly<Record<number, string>> = { 60: '1m (7 d)', 300: '5m (60 d)', 3600: '1h (365 d)', 86400: '1d (365 d)' };

export interface TierStorage {
  tokens: number;
  /** Bytes per token-year of every tier with volume and quotes, and by tier. */
  full: { total: number; byStep: Map<number, number> };
  /** The same tiers with the chance's candles only (the baseline, measured in the same run). */
  chanceOnly: { total: number; byStep: Map<number, number> };
}

/**
 * Every candle tier's storage per token-year with volume and quotes (each token trading and its
 * quotes moving every 5 s), beside the chance-only tiers, for `tokens` tokens in a database of its own.
 */
export async function measureTierStorage(tokens: number, timed: <T>(label: string, work: () => Promise<T>) => Promise<unknown>): Promise<TierStorage> {
  const database = await createTestDatabase('bench_tiers');
  try {
    const db = database.db;
    const now = Math.floor(Date.now() / 1000 / 3600) * 3600 + 1_800;
    const measure = async (full: boolean) => {
      await db.query(sql`truncate candles`);
      await generateTiers(db, tokens, now, full, timed);
      await db.query(sql`vacuum analyze candles`);
      return tierBytes(db, tokens);
    };
    const chanceOnly = await measure(false);
    const full = await measure(true);
    return { tokens, full, chanceOnly };
  } finally {
    await database.drop();
  }
}

/** The figures as lines: per tier, with volume and quotes beside the chance alone. */
export function tierStorageLines(s: TierStorage): string[] {
  const kb = (b: number | undefined) => `${Math.round((b ?? NaN) / 1024)} KB`;
  return [
    `candle tiers per token-year (${s.tokens} tokens, each trading and its quotes moving every 5 s; indexes and TOAST shared out by row bytes):`,
    ...[60, 300, 3600, 86_400].map((step) => `  ${(TIER_NAMES[step] ?? '').padEnd(12)} ${kb(s.full.byStep.get(step)).padStart(9)} with volume and quotes   ${kb(s.chanceOnly.byStep.get(step)).padStart(9)} chance only (baseline)`),
    `  ${'all tiers'.padEnd(12)} ${kb(s.full.total).padStart(9)} with volume and quotes   ${kb(s.chanceOnly.total).padStart(9)} chance only (baseline)`,
  ];
}
