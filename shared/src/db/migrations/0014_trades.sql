-- The trade tape: every print of the exchange's match feed (docs/design.md "Trades").
--
-- Packed: one row holds a batch of one series' trades (what one writer flush had for that token
-- within one UTC day), each array slot a trade. A plain row per trade with its identity index costs
-- ~90 bytes on disk; a packed slot costs 24 (a 4-byte time offset, a 4-byte price, an 8-byte signed
-- size, an 8-byte identity key) plus its share of the row's ~170 bytes of header and index entry.
--
--   lo, hi  the batch's earliest and latest exchange timestamp (Unix ms);
--   off     each trade's timestamp as an offset from lo (ms, fits an integer within a day);
--   px      the price in millionths of a dollar (exact for the exchange's ticks);
--   sz      the size in shares, its sign the taker's side: positive BUY, negative SELL;
--   k       the trade's identity key: 64 bits of a digest of (transaction hash) when the print has
--           one, else of (timestamp, price, size, side, ordinal among identical prints in its
--           websocket message). Unique per series: the writer checks it under a per-series
--           advisory lock, so no unique index is paid for per trade.
--
-- Partitioned by the UTC day of lo (partition trades_d<day number>, made ahead by the upkeep and on
-- demand by the writer), so retention drops a whole day, never rows.
create table trades (
  series  integer not null,
  lo      bigint not null,
  hi      bigint not null,
  off     integer[] not null,
  px      integer[] not null,
  sz      double precision[] not null,
  k       bigint[] not null,
  check (hi >= lo)
) partition by range (lo);

-- Both the identity check (rows of a series whose span meets the new trades') and the tape's pages
-- (newest first: rows of the series whose span reaches back to a bound) read by a series' latest time.
create index trades_series_hi on trades (series, hi);

-- Makes the partition of one day (days since the Unix epoch) when missing. Two writers racing to
-- make the same day both succeed.
create function trades_partition(day integer) returns void language plpgsql as $$
begin
  if to_regclass(format('trades_d%s', day)) is not null then
    return;
  end if;
  begin
    execute format('create table trades_d%s partition of trades for values from (%s) to (%s)',
                   day, day::bigint * 86400000, (day::bigint + 1) * 86400000);
  exception when duplicate_table or unique_violation then
    null;
  end;
end $$;

-- When a series' trade data begins: the exchange timestamp of the earliest trade ever recorded for
-- it. Written with the trades, in their transaction; never moved later; kept when retention drops
-- the trades themselves (a candle before it has no volume figure rather than a zero).
create table trade_series (
  series    integer primary key references series(id),
  first_ms  bigint not null
);

-- One row per recorded trade, unpacked: the shape the candle rollups and exports read.
create view trade_prints as
select t.series,
       t.lo + u.off::bigint as at_ms,
       u.px::double precision / 1000000 as price,
       abs(u.sz) as size,
       case when u.sz < 0 then 'SELL' else 'BUY' end as side
from trades t
cross join lateral unnest(t.off, t.px, t.sz) as u(off, px, sz);
