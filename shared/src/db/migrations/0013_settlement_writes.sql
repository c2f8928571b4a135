-- What a settlement writes, made cheaper (a 10,000-call settlement rewrites ~10,000 calls and
-- ~20,000 field records in its transaction, and the window upkeep after it ~90,000 window records).
--
-- calls_settled_at is calls_settled_window's key and predicate with fewer included columns: every
-- query that read it reads calls_settled_window as well, and each settled call cost one more index
-- entry to write.
drop index if exists calls_settled_at;

-- A field or window record is only ever updated in its sums, which no index holds: with room left
-- on its page, the new version goes there and no index entry is written (a heap-only update).
-- Packed full, as a rebuild's insert leaves them, every update wrote a new entry into both indexes.
-- The setting applies to pages written from now on: a rebuild (truncate and insert) lays every
-- row out with it.
alter table user_field_records set (fillfactor = 70);
alter table user_window_records set (fillfactor = 70);

-- The all-time field records hold the calls settled up to `through`, as a window span's rows hold
-- theirs (0011): the window upkeep adds each minute's settled calls and moves `through` on, and a
-- settlement adds its calls in its own transaction only with a clock behind `through`. The boards
-- and figures read from them add the calls settled between `through` and their instant, so they
-- are exact, and a 10,000-call settlement no longer upserts ~20,000 field records while it holds
-- every record and board. The records kept so far count every call settled until now.
create table user_field_edges (
  one      boolean primary key default true check (one),
  through  timestamptz not null
);
insert into user_field_edges (through) values (now());
