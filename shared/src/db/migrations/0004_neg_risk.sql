-- The exchange's `negRisk` (docs/protocol.md §3): an event whose markets' outcomes are mutually
-- exclusive (one winner across the event, e.g. a soccer match's home/draw/away markets). Kept in
-- the model so readers can tell exclusive events from independent ones; false until the catalog says.
alter table events add column if not exists neg_risk boolean not null default false;
alter table markets add column if not exists neg_risk boolean not null default false;
