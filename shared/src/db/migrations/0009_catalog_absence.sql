-- Absent is not void. An event the catalog stops knowing (404 by id) is closed only once its absence
-- has been confirmed over a grace period: several syncs that all found it missing, the first of them
-- at least CATALOG_VANISH_GRACE_SECONDS ago. One answer (a transient error, a deploy, a moved event,
-- a restarted simulator) closes nothing. A row lives while the event keeps missing; any answer for
-- the event deletes it.
create table catalog_absences (
  event_id         text primary key references events (id) on delete cascade,
  first_missed_at  timestamptz not null,
  last_missed_at   timestamptz not null,
  misses           integer not null default 1
);
