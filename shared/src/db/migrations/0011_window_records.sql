-- Window records (docs/skill.md "How it is kept"): a person's sums over the calls settled in the
-- last day, week or month, per field, kept as rows so a window board ranks at most one row per
-- person instead of aggregating every call settled in the window.

-- For each span, the calls its rows count: those settled in (since, through]. The window upkeep
-- (a job every minute) adds the calls settled after `through` and takes out those settled up to
-- now − the window, then moves both; a settlement adds its own calls only when they fall at or
-- before `through` (a late clock). No row until the first rebuild makes one: no call is counted,
-- and the API counts every call in the window.
create table user_window_edges (
  span     text primary key check (span in ('day', 'week', 'month')),
  since    timestamptz not null,
  through  timestamptz not null
);

-- One row per span, field and person with a call counted there: field '' is every market,
-- `c:<category>` and `l:<league>` the markets of that category or league (as user_field_records).
create table user_window_records (
  span             text not null check (span in ('day', 'week', 'month')),
  field            text not null,
  user_id          bigint not null references users(id) on delete cascade,
  settled          integer not null default 0,
  won              integer not null default 0,
  lost             integer not null default 0,
  profit_on_10     numeric not null default 0,
  xp               integer not null default 0,
  brier_sum        numeric not null default 0,
  clv_sum          numeric not null default 0,
  clv_calls        integer not null default 0,
  primary key (span, field, user_id)
) with (fillfactor = 70);
-- Room left on each page: the upkeep updates thousands of these rows in place, and a row
-- updated with room on its page (no indexed column changes) costs no index entry (HOT).
create index user_window_records_user on user_window_records (user_id);
