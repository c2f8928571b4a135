-- Which version of its call row each cached Call object was made from (the row's xmin: every update
-- of a row gives it a new one). A build asked for calls whose rows have not changed since their
-- object was made skips them: a settlement's 10,000 calls are requested twice (the job right after
-- its commit, the outbox relay again for the same row) and were made twice. Null (rows cached
-- before this column): made again on their next request. The Call object's other parts (a person's
-- handle, a market's question) are not requests for a call's object: the full build refreshes them.
alter table record_call_json add column src_xmin xid;
