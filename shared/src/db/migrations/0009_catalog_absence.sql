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

-- The closed list of /markets (status=closed): events whose markets are all closed (or the event
-- itself), most recently closed first, kept listable for good. `closed_at` is when the event became
-- so, set once by the triggers below and cleared if it reopens, so a walk's keyset (closed_at, id)
-- never moves under it (updated_at would: the catalog still edits closed rows).
alter table events add column closed_at timestamptz;

create function event_closed_at(e events) returns timestamptz language sql stable as $$
  select case
    when e.closed or (exists (select 1 from markets m where m.event_id = e.id)
                      and not exists (select 1 from markets m where m.event_id = e.id and not m.closed))
    then coalesce(e.closed_at, (select max(m.resolved_at) from markets m where m.event_id = e.id), now())
  end
$$;

create function events_set_closed_at() returns trigger language plpgsql as $$
begin
  new.closed_at := event_closed_at(new);
  return new;
end
$$;
create trigger events_closed_at before insert or update of closed on events
  for each row execute function events_set_closed_at();

create function markets_touch_event_closed_at() returns trigger language plpgsql as $$
begin
  update events e set closed_at = event_closed_at(e)
   where e.id = new.event_id and e.closed_at is distinct from event_closed_at(e);
  return null;
end
$$;
create trigger markets_closed_at after insert or update of closed on markets
  for each row execute function markets_touch_event_closed_at();

update events e set closed_at = event_closed_at(e);
create index events_closed_newest on events (closed_at desc, id desc) where closed_at is not null;
