-- The whole data model (issue "market-data spine" item 2), so later work does not reshape it.
-- Money and chances are numeric, never float. Exchange ids are text: token ids exceed 2^64.

-- ── Catalog (written by the ingestor) ────────────────────────────────────────────────────────────
create table events (
  id            text primary key,                 -- exchange event id
  slug          text not null unique,
  title         text not null,
  description   text not null default '',
  category      text not null check (category in ('Football','Sport','Crypto','Politics','Economy','Tech','Culture')),
  league        text,                             -- league or coin key (epl, nba, btc …), null when none
  starts_at     timestamptz,
  closes_at     timestamptz,
  volume        numeric not null default 0,       -- total traded volume
  volume_24h    numeric not null default 0,       -- "busiest first" orders by this
  liquidity     numeric not null default 0,
  active        boolean not null default true,
  closed        boolean not null default false,
  game_id       text,                             -- sports feed gameId (number, or cricket's metadataGameId)
  teams         jsonb not null default '[]',      -- [{name, abbreviation, home}] from the catalog's team ordering
  tags          jsonb not null default '[]',      -- [{id, label, slug}] as the exchange sent them
  updated_at    timestamptz not null default now()
);
create index events_open_busiest on events (volume_24h desc) where closed = false;
create index events_category on events (category) where closed = false;
create index events_league on events (league) where closed = false;
create index events_game on events (game_id) where game_id is not null;

create table markets (
  id                     text primary key,        -- exchange market id
  event_id               text not null references events(id) on delete cascade,
  condition_id           text not null,
  position               integer not null,        -- order within the event, as the catalog lists it
  question               text not null,
  slug                   text not null default '',
  label                  text not null default '',  -- groupItemTitle, or the question when absent
  kind                   text,                     -- sportsMarketType in snake_case; null for non-sport
  line                   numeric,
  closes_at              timestamptz,
  active                 boolean not null default true,
  closed                 boolean not null default false,
  accepting_orders       boolean not null default true,
  volume                 numeric not null default 0,
  one_day_price_change   numeric,                 -- catalog's oneDayPriceChange (fallback for change_24h)
  resolved_outcome_index integer,                 -- set once resolved with a winner
  voided                 boolean not null default false,
  resolved_at            timestamptz,
  updated_at             timestamptz not null default now()
);
create index markets_event on markets (event_id, position);
create index markets_condition on markets (condition_id);

create table outcomes (
  market_id      text not null references markets(id) on delete cascade,
  outcome_index  integer not null check (outcome_index >= 0),
  name           text not null,
  token_id       text not null unique,            -- CLOB asset id, 70-78 digits
  catalog_price  numeric check (catalog_price between 0 and 1),
  primary key (market_id, outcome_index)
);

create table games (
  game_id     text primary key,
  event_id    text references events(id) on delete set null,
  league      text not null default '',
  home_team   text not null default '',
  away_team   text not null default '',
  status      text not null default '',
  score       text not null default '',
  period      text not null default '',
  clock       text not null default '',
  live        boolean not null default false,
  ended       boolean not null default false,
  updated_at  timestamptz not null default now()
);
create index games_live on games (live) where live;

-- One point per outcome token; appended when the chance moved or a minute passed, backfilled from /prices-history.
create table price_points (
  token_id  text not null,
  t         timestamptz not null,
  chance    numeric not null check (chance between 0 and 1),
  primary key (token_id, t)
);

-- Resolution log: one row per market, whichever source (ws or catalog) saw it first.
create table market_resolutions (
  market_id               text primary key references markets(id) on delete cascade,
  winning_outcome_index   integer,                -- null when voided
  voided                  boolean not null,
  source                  text not null check (source in ('ws','catalog')),
  resolved_at             timestamptz not null default now()
);

-- ── People and their records (written only by shared/src/records and the settlement worker) ────
create table users (
  id            bigint generated always as identity primary key,
  handle        text not null,
  display_name  text not null,
  avatar        text,
  bio           text not null default '',
  interests     text[] not null default '{}',
  joined_at     timestamptz not null default now()
);
create unique index users_handle_ci on users (lower(handle));

create table follows (
  follower_id  bigint not null references users(id) on delete cascade,
  followee_id  bigint not null references users(id) on delete cascade,
  created_at   timestamptz not null default now(),
  primary key (follower_id, followee_id),
  check (follower_id <> followee_id)
);
create index follows_followee on follows (followee_id);

create table calls (
  id              text primary key,               -- short public id used in links
  user_id         bigint not null references users(id),
  market_id       text not null references markets(id),
  outcome_index   integer not null,
  chance_at_call  numeric not null check (chance_at_call > 0 and chance_at_call < 1),
  thesis          text not null default '',
  copied_from     text references calls(id),
  is_fade         boolean not null default false,
  status          text not null default 'open' check (status in ('open','won','lost','void')),
  profit_on_10    numeric,                        -- null while open
  xp_awarded      integer not null default 0,
  made_at         timestamptz not null default now(),
  settled_at      timestamptz,
  foreign key (market_id, outcome_index) references outcomes(market_id, outcome_index),
  check ((status = 'open') = (settled_at is null)),
  check ((status = 'open') = (profit_on_10 is null))
);
create index calls_newest on calls (made_at desc, id desc);
create index calls_user_newest on calls (user_id, made_at desc);
create index calls_market_open on calls (market_id) where status = 'open';
create index calls_copied_from on calls (copied_from) where copied_from is not null;

create table thesis_updates (
  id       bigint generated always as identity primary key,
  call_id  text not null references calls(id) on delete cascade,
  body     text not null,
  at       timestamptz not null default now()
);
create index thesis_updates_call on thesis_updates (call_id, at);

create table combos (
  id           text primary key,
  user_id      bigint not null references users(id),
  chance       numeric not null check (chance > 0 and chance < 1),  -- product of the legs at the time; never changes
  wins_on_10   numeric not null,
  status       text not null default 'open' check (status in ('open','won','lost','void')),
  xp_awarded   integer not null default 0,
  made_at      timestamptz not null default now(),
  settled_at   timestamptz
);
create index combos_status_newest on combos (status, made_at desc);

create table combo_legs (
  combo_id        text not null references combos(id) on delete cascade,
  leg_index       integer not null check (leg_index between 0 and 5),
  market_id       text not null references markets(id),
  outcome_index   integer not null,
  chance_at_call  numeric not null check (chance_at_call > 0 and chance_at_call < 1),
  status          text not null default 'open' check (status in ('open','won','lost','void')),
  settled_at      timestamptz,
  primary key (combo_id, leg_index),
  unique (combo_id, market_id),
  foreign key (market_id, outcome_index) references outcomes(market_id, outcome_index)
);
create index combo_legs_market_open on combo_legs (market_id) where status = 'open';

-- ── Projections (rebuildable from the tables above) ─────────────────────────────────────────────
create table user_records (
  user_id       bigint primary key references users(id) on delete cascade,
  calls         integer not null default 0,
  settled       integer not null default 0,
  won           integer not null default 0,
  lost          integer not null default 0,
  right_pct     integer not null default 0,
  profit_on_10  numeric not null default 0,
  profit_7d     numeric not null default 0,
  xp            integer not null default 0,
  streak        integer not null default 0,
  followers     integer not null default 0,
  following     integer not null default 0,
  copies        integer not null default 0,
  updated_at    timestamptz not null default now()
);

create table leaderboard_rows (
  sort     text not null check (sort in ('profit','right','xp','week')),
  rank     integer not null,
  user_id  bigint not null references users(id) on delete cascade,
  primary key (sort, rank),
  unique (sort, user_id)
);

-- platform_split: people whose latest call on the market is on each outcome (one per person).
create table market_splits (
  market_id      text not null references markets(id) on delete cascade,
  outcome_index  integer not null,
  people         integer not null,
  primary key (market_id, outcome_index)
);

create table projection_versions (
  name        text primary key,
  version     integer not null,
  rebuilt_at  timestamptz not null default now()
);
