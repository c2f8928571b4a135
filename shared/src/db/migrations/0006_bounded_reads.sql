-- Bounded reads.
-- How many calls and combos have settled, per status (the worker's calls_settled_total and
-- combos_settled_total): kept by statement-level triggers as rows change, so a
-- /metrics scrape reads a few rows instead of counting every call. A statement's changed rows are
-- counted once from its transition tables (a 10,000-call settlement: one grouped pass and three row
-- updates). ENABLE ALWAYS: a bulk load with session_replication_role = replica (foreign-key checks
-- off) is still counted.
create table settled_counts (
  kind    text not null check (kind in ('call', 'combo')),
  status  text not null check (status in ('won', 'lost', 'void')),
  n       bigint not null default 0,
  primary key (kind, status)
);
insert into settled_counts (kind, status, n)
select 'call', s, 0 from unnest(array['won', 'lost', 'void']) s
union all
select 'combo', s, 0 from unnest(array['won', 'lost', 'void']) s;
update settled_counts t set n = x.n
from (select 'call' as kind, status, count(*) as n from calls where status <> 'open' group by status
      union all
      select 'combo', status, count(*) from combos where status <> 'open' group by status) x
where t.kind = x.kind and t.status = x.status;

-- TG_ARGV[0]: the kind ('call' or 'combo'). Rows are updated in status order, so two transactions
-- moving the same counters never wait on each other in opposite orders.
create function settled_counts_apply() returns trigger language plpgsql as $$
begin
  if tg_op = 'TRUNCATE' then
    update settled_counts set n = 0 where kind = tg_argv[0];
  elsif tg_op = 'INSERT' then
    update settled_counts t set n = t.n + d.n
    from (select status, count(*) as n from new_rows where status <> 'open' group by status order by status) d
    where t.kind = tg_argv[0] and t.status = d.status;
  elsif tg_op = 'UPDATE' then
    update settled_counts t set n = t.n + d.n
    from (select status, sum(k) as n
          from (select status, 1 as k from new_rows where status <> 'open'
                union all
                select status, -1 from old_rows where status <> 'open') x
          group by status having sum(k) <> 0 order by status) d
    where t.kind = tg_argv[0] and t.status = d.status;
  elsif tg_op = 'DELETE' then
    update settled_counts t set n = t.n - d.n
    from (select status, count(*) as n from old_rows where status <> 'open' group by status order by status) d
    where t.kind = tg_argv[0] and t.status = d.status;
  end if;
  return null;
end $$;

-- The same four triggers on calls (kind 'call') and combos (kind 'combo').
do $$
declare
  t text;
  k text;
begin
  for t, k in select * from (values ('calls', 'call'), ('combos', 'combo')) as v(t, k) loop
    execute format('create trigger settled_counts_insert after insert on %I referencing new table as new_rows
                    for each statement execute function settled_counts_apply(%L)', t, k);
    execute format('create trigger settled_counts_update after update on %I referencing old table as old_rows new table as new_rows
                    for each statement execute function settled_counts_apply(%L)', t, k);
    execute format('create trigger settled_counts_delete after delete on %I referencing old table as old_rows
                    for each statement execute function settled_counts_apply(%L)', t, k);
    execute format('create trigger settled_counts_truncate after truncate on %I
                    for each statement execute function settled_counts_apply(%L)', t, k);
    execute format('alter table %I enable always trigger settled_counts_insert, enable always trigger settled_counts_update,
                    enable always trigger settled_counts_delete, enable always trigger settled_counts_truncate', t);
  end loop;
end $$;

-- A person's calls newest first, carrying what their record counts (user_records for some people,
-- projections/user-records.ts): each person's figures are then an index-only range, not a heap
-- block per call (a person's calls are spread over the table). Replaces calls_user_newest_id, whose
-- key it keeps for the call lists and the API's pages.
create index calls_user_newest_cover on calls (user_id, made_at desc, id desc) include (status, profit_on_10, xp_awarded, settled_at);
drop index calls_user_newest_id;
