-- Indexes behind every query the worker runs on calls, combos and legs, and the
-- two formatting helpers the record snapshots are built with in SQL. A test EXPLAINs each query
-- over a generated million-call database and fails on a sequential scan of calls.

-- A market's newest calls (calls:market:<id>), every call of a market (settlement, splits, the
-- snapshot builder's expansion of a resolved market): by market, newest first, ties by id.
create index calls_market_newest on calls (market_id, made_at desc, id desc);

-- A person's newest calls (user-calls lists, user_records): ties by id like every list.
create index calls_user_newest_id on calls (user_id, made_at desc, id desc);
drop index calls_user_newest;

-- The week board and the 7-day window's edge: calls settled after a moment, and whose they are.
create index calls_settled_at on calls (settled_at) include (user_id) where settled_at is not null;

-- Combos of a status, newest first (combos:<status>), ties by id.
create index combos_status_newest_id on combos (status, made_at desc, id desc);
drop index combos_status_newest;

-- A person's combos (combo XP in user_records).
create index combos_user on combos (user_id);

-- Every leg on a market, settled or not (who a resolved market touches).
create index combo_legs_market on combo_legs (market_id);

-- Each call's docs/api.md Call object as the JSON text the record snapshots embed (written by the
-- record snapshot builder when the call changes and by its full builds), so a person's or a market's
-- list is an aggregation of ready text rather than a hundred objects built again per list. Unlogged:
-- it is a cache of what the tables say; the builder makes any missing body on the fly.
create unlogged table record_call_json (
  call_id  text primary key references calls(id) on delete cascade,
  body     text not null
);

-- JavaScript's Date#toISOString in SQL: UTC, milliseconds (truncated, as a JS Date holds them), 'Z'.
create function pm_iso(t timestamptz) returns text
  language sql stable parallel safe
  return to_char(t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');

-- JavaScript's encodeURIComponent in SQL (links of docs/design.md): unreserved characters kept, every
-- other UTF-8 byte as %XX. Public ids and handles are already url-safe, so the check is all most
-- values cost: it is a plain expression the planner inlines, and only the rare other value pays
-- for the character-by-character pm_uri_encode.
create function pm_uri_encode(s text) returns text
  language sql immutable parallel safe
  return (
    select coalesce(string_agg(
             case when ch ~ '^[A-Za-z0-9_.!~*''()-]$' then ch
                  else upper(regexp_replace(encode(convert_to(ch, 'UTF8'), 'hex'), '(..)', '%\1', 'g')) end,
             '' order by n), '')
    from regexp_split_to_table(s, '') with ordinality as t(ch, n)
  );

create function pm_uri_component(s text) returns text
  language sql immutable parallel safe
  return case when s ~ '^[A-Za-z0-9_.!~*''()-]*$' then s else pm_uri_encode(s) end;
