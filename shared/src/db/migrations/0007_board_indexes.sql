-- The boards' top-N in index order (issue 18 item 5: "an index behind every query the worker runs").
-- Every settlement and every projection batch re-ranks the four boards (projections/leaderboard.ts):
-- without these, each board was a scan of every user_records row joined to every user and a top-N
-- sort of them (35 ms a board, 57 ms the week's, at 50,000 people); with them, each reads its first
-- ~1,000 eligible rows in order and sorts only the ties by handle (about 7 ms a board). Partial, on
-- exactly who may be on each board (records.ts RIGHT_MIN_SETTLED = 5 for `right`); the week board's
-- "played this week" stays a per-row probe of calls_user_newest_cover.
create index user_records_board_profit on user_records (profit_on_10 desc, settled desc) where settled >= 1;
create index user_records_board_xp on user_records (xp desc, settled desc) where settled >= 1;
create index user_records_board_right on user_records (right_pct desc, settled desc) where settled >= 5;
create index user_records_board_week on user_records (profit_7d desc, settled desc) where settled >= 1;
