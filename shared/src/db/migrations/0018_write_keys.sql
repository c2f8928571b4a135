-- Writes in doubt: a write whose commit was cut off (a lost connection, a failover of the primary)
-- may or may not have happened. Its client sends it with an idempotency key and, when it is in doubt,
-- sends it again with the same key: the key's row, written in the write's own transaction, answers
-- the retry with what was written then instead of a second write. `request` is what the write asked
-- for, so the same key with different content is refused instead of answered. A key is one person's
-- (their calls, combos and the thesis updates of their calls share one space) and is kept at least
-- 30 days (the reconciler prunes those older than 35).
create table write_keys (
  user_id  bigint not null references users(id),
  key      text not null check (length(key) between 1 and 200),
  kind     text not null check (kind in ('call', 'combo', 'thesis_update')),
  request  jsonb not null,
  result   jsonb not null,
  made_at  timestamptz not null default now(),
  primary key (user_id, key)
);

create index write_keys_made_at on write_keys (made_at);
