-- Candles with quotes and volume (docs/history.md): the book top recorded beside each raw point,
-- and every candle tier gains bid/ask open-high-low-close and the trades printed in the bucket.

-- The first outcome's best bid and ask when the point was taken, integers of 1/10,000 like the
-- tiers (prices are on a tick of 0.01 or finer, so exact); null while that side of the book is
-- empty. Two smallints fit the row's existing alignment padding: a raw point stays 40 bytes.
alter table raw_points add column bid smallint, add column ask smallint;

-- Per slot, beside o/h/l/c/n (same slot numbering, each group written whole or not at all; a
-- null column means nothing of that group in the row, as in rows from before this migration or
-- from a backfill):
--   bo, bh, bl, bc / ao, ah, al, ac  the best bid's / ask's open, high, low, close over the bucket
--                                    (units of 1/10,000; a null slot: that side empty throughout);
--   v   shares printed (integers of 10^-6 share: the exchange's own precision, so sums are exact);
--   nv  notional, Σ price × size in dollars;
--   tn  trades printed.
-- A null trade slot is a bucket without a trade; whether that reads as 0 or as "no trade data
-- yet" is decided on read from when the series' trade data begins.
alter table candles
  add column bo smallint[], add column bh smallint[], add column bl smallint[], add column bc smallint[],
  add column ao smallint[], add column ah smallint[], add column al smallint[], add column ac smallint[],
  add column v bigint[], add column nv double precision[], add column tn integer[];

-- `a` with the slots from `at` on replaced by `b` (b's first element at slot at), padded with nulls
-- up to `at` where `a` is shorter or null; `a` unchanged when `b` is null. Every array stays
-- 1-based: a subscripted assignment into a null array would start it at the subscript assigned.
create function history_splice(a anyarray, b anyarray, at integer) returns anyarray language sql immutable as $$
  select case when b is null then a
    else coalesce(a[1:at - 1], b[0:0])
         || array_fill(b[0], array[at - 1 - coalesce(cardinality(a[1:at - 1]), 0)])
         || b
         || coalesce(a[at + cardinality(b):], b[0:0])
  end
$$;
