-- Skill records: closing chances, Brier score, calibration and closing-line value (docs/skill.md).

-- The displayed chance of each outcome (by outcome index, 1-based in SQL) when the market closed or
-- resolved, recorded once by the ingestor in the transaction that closed or resolved it; an element
-- is null where no chance was known. Null for the whole market while it is open.
alter table markets add column closing_chances numeric[];

-- What the skill figures of a record are made of, kept beside the record's other sums and moved by the
-- same settlement delta: brier_sum over won/lost calls (their count is won + lost), clv_sum over
-- won/lost calls whose market has a closing chance (clv_calls of them), and the newest settled_at
-- of the person's calls (the week board's "played this week", without a scan of calls).
alter table user_records
  add column brier_sum numeric not null default 0,
  add column clv_sum numeric not null default 0,
  add column clv_calls integer not null default 0,
  add column last_settled_at timestamptz;

-- The boards kept as rows gain clv and brier (all time, every field).
alter table leaderboard_rows drop constraint leaderboard_rows_sort_check;
alter table leaderboard_rows add constraint leaderboard_rows_sort_check check (sort in ('profit','right','xp','week','clv','brier'));

-- A person's all-time record within one field: `c:<category>` or `l:<league>` of the markets' events.
-- The category and league boards rank these rows (one field's rows, at most one per person).
create table user_field_records (
  user_id          bigint not null references users(id) on delete cascade,
  field            text not null,
  settled          integer not null default 0,
  won              integer not null default 0,
  lost             integer not null default 0,
  profit_on_10     numeric not null default 0,
  xp               integer not null default 0,
  brier_sum        numeric not null default 0,
  clv_sum          numeric not null default 0,
  clv_calls        integer not null default 0,
  primary key (field, user_id)
);
create index user_field_records_user on user_field_records (user_id);

-- Day, week and month boards aggregate the calls settled in their window: one index range read
-- without the table (every figure a board needs is in the index).
create index calls_settled_window on calls (settled_at)
  include (user_id, market_id, outcome_index, status, chance_at_call, profit_on_10, xp_awarded)
  where settled_at is not null;
