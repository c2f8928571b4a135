-- The change channel (docs/design.md "Storage and the change channel"): every change that must
-- cause work elsewhere writes an outbox row in the SAME transaction as the change. The worker's relay
-- claims unsent rows (for update skip locked), turns them into BullMQ jobs and sets sent_at. Redis
-- can then vanish at any time without losing the fact that work is owed.

create table outbox (
  id          bigint generated always as identity primary key,
  -- market-resolved: {marketId, eventId}                      → settle-market job, the event's snapshots
  -- records-changed: {userIds, marketIds, dirty}              → projections, record snapshots
  -- market-settled:  {marketId, userIds, callIds, combos}     → projections, record snapshots
  -- events-changed:  {eventIds}                               → the events' snapshots, catalog version
  topic       text not null check (topic in ('market-resolved', 'records-changed', 'market-settled', 'events-changed')),
  payload     jsonb not null,
  created_at  timestamptz not null default now(),
  sent_at     timestamptz
);
-- The relay's claim and the backlog metrics read only unsent rows.
create index outbox_unsent on outbox (id) where sent_at is null;
-- Pruning sent rows, and the reconciler's look back over recent changes.
create index outbox_created on outbox (created_at);

-- Wake the relays on commit (notifications are delivered only when the writing transaction commits,
-- and one per statement is enough: the relay claims whatever is unsent).
create function outbox_notify() returns trigger language plpgsql as $$
begin
  perform pg_notify('outbox', '');
  return null;
end
$$;
create trigger outbox_notify after insert on outbox for each statement execute function outbox_notify();

-- When the settlement of a resolved market committed (set in settlement's own transaction). Resolved
-- markets without it are the reconciler's "pending settlement": a small set, read through its index.
alter table markets add column settled_at timestamptz;
update markets m set settled_at = m.resolved_at
where m.resolved_at is not null
  and not exists (select 1 from calls c where c.market_id = m.id and c.status = 'open')
  and not exists (select 1 from combo_legs l where l.market_id = m.id and l.status = 'open');
create index markets_settlement_pending on markets (resolved_at) where resolved_at is not null and settled_at is null;
