-- Each all-time board's order over user_records, as an index of the people on it (docs/skill.md).
-- A person's rank on a board is then 1 + a count of one index range (those ahead of them) instead of
-- a pass over every record with every board's score computed per row, and a kept board's top rows
-- are the first entries of its index instead of a sort of every eligible record.
--
-- Each index holds its board's score and settled (the first tie-break), ascending, and only the
-- eligible records; the score expressions and the predicates are written exactly as the queries
-- write them (services/worker/src/projections/leaderboard.ts, services/api/src/pages/skill-pages.ts),
-- the constants inlined (5: RIGHT_MIN_SETTLED, 10: SKILL_MIN_SETTLED), or the planner cannot use them.
create index user_records_board_profit on user_records (profit_on_10, settled) where settled >= 1;
create index user_records_board_right on user_records (right_pct, settled) where settled >= 5;
create index user_records_board_xp on user_records (xp, settled) where settled >= 1;
create index user_records_board_week on user_records (profit_7d, settled) include (last_settled_at) where settled >= 1;
create index user_records_board_clv on user_records ((trunc(clv_sum, 30) / nullif(clv_calls, 0)), settled)
  where settled >= 10 and clv_calls > 0;
create index user_records_board_brier on user_records ((-(trunc(brier_sum, 30) / nullif(won + lost, 0))), settled)
  where settled >= 10 and won + lost > 0;
