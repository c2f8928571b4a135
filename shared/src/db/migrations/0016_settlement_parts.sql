-- A market settles in parts (services/worker/src/settlement): each part settles the open calls of a
-- range of people, in its own short transaction, so one market of a million calls no longer holds
-- the projections lock for minutes while every other market waits.
--
-- A part finds its people through this index: the open calls of one market in person order, so a
-- part reads the range it settles and nothing else. It replaces calls_market_open (market only),
-- which held the same entries: a settled call leaves both, and neither costs a write more.
create index calls_market_open_user on calls (market_id, user_id) where status = 'open';
drop index if exists calls_market_open;

-- What a settlement in parts has done so far, kept with the market because the parts are separate
-- transactions (a worker killed between two parts leaves it for the next run): the calls open when
-- it began, those settled since, by status, and the combo legs and combos decided. Null while no
-- part has committed without finishing the market, and again once the last part has. The market
-- object shows `settling` from it.
alter table markets add column settle_progress jsonb;
