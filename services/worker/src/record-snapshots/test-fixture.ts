import { sql, tables, type Calls_InsertParameters, type Db } from '@pm/shared/db';
import { WEB_URL } from '../testing/builder-source.js';

/**
 * People, calls and combos for the record snapshot tests, inserted with plain SQL as the write path,
 * settlement and projections would leave them (so these tests do not depend on that code):
 * - event `ars-che` with m1 (open, callers split 3/1), m2 (resolved Yes), m3 (open, nobody's split);
 * - alice (avatar, 6 settled), Bob (no avatar, 3 settled), carol (no user_records row yet);
 * - calls spread over an hour, one copy of alice's call by Bob and one fade, thesis updates on a1;
 * - combos: k-open, k-won, k-lost.
 */
export { WEB_URL };
export const T0 = Date.parse('2026-11-20T12:00:00.000Z');
export const at = (minutes: number) => new Date(T0 + minutes * 60_000);

/** Bob's call b2 (a fade copied from alice's a7, still open) as docs/api.md's Call: what every list shows for it. */
export const B2_CALL = {
  id: 'b2',
  user: { handle: 'Bob', avatar: null },
  market_id: 'm1',
  event: 'ars-che',
  question: 'Will Arsenal win?',
  outcome: 'No',
  outcome_index: 1,
  chance_at_call: 0.46,
  thesis: 'Fading alice',
  copied_from: { id: 'a7', handle: 'alice' },
  is_fade: true,
  status: 'open',
  profit_on_10: null,
  made_at: at(32).toISOString(),
  settled_at: null,
  url: `${WEB_URL}/c/b2`,
};

export interface SeededIds {
  alice: number;
  bob: number;
  carol: number;
}

export async function insertRecordsFixture(db: Db): Promise<SeededIds> {
  await db.query(sql`
    insert into events (id, slug, title, category, league) values ('e1', 'ars-che', 'Arsenal vs Chelsea', 'Football', 'epl')
  `);
  await db.query(sql`
    insert into markets (id, event_id, condition_id, position, question, label, resolved_outcome_index, resolved_at, closed) values
      ('m1', 'e1', '0xm1', 0, 'Will Arsenal win?', 'Arsenal', null, null, false),
      ('m2', 'e1', '0xm2', 1, 'Arsenal leading at half-time?', 'HT', 0, '2026-11-20T13:00:00Z', true),
      ('m3', 'e1', '0xm3', 2, 'Over 2.5 goals?', 'O/U', null, null, false)
  `);
  await db.query(sql`
    insert into outcomes (market_id, outcome_index, name, token_id) values
      ('m1', 0, 'Yes', 't10'), ('m1', 1, 'No', 't11'),
      ('m2', 0, 'Yes', 't20'), ('m2', 1, 'No', 't21'),
      ('m3', 0, 'Over', 't30'), ('m3', 1, 'Under', 't31')
  `);
  const users = await db.query(sql`
    insert into users (handle, display_name, avatar, bio, interests, joined_at) values
      ('alice', 'Alice A.', 'https://img.example/alice.png', 'Reads the table.', '{Football,"Football: EPL"}', '2026-01-01T00:00:00Z'),
      ('Bob', 'Bob B.', null, '', '{Crypto}', '2026-02-01T00:00:00Z'),
      ('carol', 'Carol C.', null, 'New here.', '{}', '2026-03-01T00:00:00Z')
    returning id, handle
  `);
  const id = (h: string) => Number((users as Array<{ id: number; handle: string }>).find((u) => u.handle === h)?.id);
  const ids: SeededIds = { alice: id('alice'), bob: id('Bob'), carol: id('carol') };

  // alice: a1..a6 settled on m2 (won ×4 at 0.4, lost ×1, void ×1), a7 open on m1 (newest of hers).
  const settled: Array<[string, number, string, number, number]> = [
    ['a1', 0, 'won', 15, 0],
    ['a2', 0, 'won', 15, 1],
    ['a3', 0, 'won', 15, 2],
    ['a4', 0, 'won', 15, 3],
    ['a5', 1, 'lost', -10, 4],
    ['a6', 1, 'void', 0, 5],
  ];
  const call = (id: string, user_id: number, market_id: string, outcome_index: number, chance: number, thesis: string, minute: number, more: Partial<Calls_InsertParameters> = {}): Calls_InsertParameters => ({
    id,
    user_id,
    market_id,
    outcome_index,
    chance_at_call: String(chance),
    thesis,
    made_at: at(minute),
    ...more,
  });
  const settledAt = (status: string, profit: number, xp = 0): Partial<Calls_InsertParameters> => ({ status, profit_on_10: String(profit), xp_awarded: xp, settled_at: at(60) });
  await tables.calls(db).insert(
    ...settled.map(([cid, outcome, status, profit, minute]) => call(cid, ids.alice, 'm2', outcome, 0.4, `thesis ${cid}`, minute, settledAt(status, profit, status === 'won' ? 64 : 0))),
    call('a7', ids.alice, 'm1', 0, 0.535, 'Arsenal at home', 30),
    call('b1', ids.bob, 'm1', 0, 0.54, 'Same as alice', 31, { copied_from: 'a7' }),
    call('b2', ids.bob, 'm1', 1, 0.46, 'Fading alice', 32, { copied_from: 'a7', is_fade: true }),
    call('b3', ids.bob, 'm2', 1, 0.6, 'No lead', 6, settledAt('lost', -10)),
    call('b4', ids.bob, 'm2', 0, 0.4, 'Lead', 7, settledAt('won', 15)),
    call('b5', ids.bob, 'm2', 0, 0.4, 'Lead again', 8, settledAt('won', 15)),
    call('c1', ids.carol, 'm1', 1, 0.45, 'Chelsea hold', 40),
  );
  await db.query(sql`
    insert into thesis_updates (call_id, body, at) values
      ('a7', 'Team news: Saka starts.', ${at(35)}),
      ('a7', 'Still confident at half-time.', ${at(50)})
  `);
  await db.query(sql`
    insert into market_splits (market_id, outcome_index, people) values ('m1', 0, 3), ('m1', 1, 1)
  `);
  await db.query(sql`
    insert into user_records (user_id, calls, settled, won, lost, right_pct, profit_on_10, profit_7d, xp, streak, followers, following, copies)
    values (${ids.alice}, 7, 6, 4, 1, 80, 50, 50, 256, 0, 2, 1, 2),
           (${ids.bob}, 5, 3, 2, 1, 67, 20, 20, 128, 2, 0, 1, 0)
  `);
  await db.query(sql`
    insert into leaderboard_rows (sort, rank, user_id) values
      ('profit', 1, ${ids.alice}), ('profit', 2, ${ids.bob}),
      ('right', 1, ${ids.alice}), ('right', 2, ${ids.bob}),
      ('xp', 1, ${ids.alice}), ('xp', 2, ${ids.bob}),
      ('week', 1, ${ids.alice}), ('week', 2, ${ids.bob})
  `);
  await db.query(sql`
    insert into combos (id, user_id, chance, wins_on_10, status, xp_awarded, made_at, settled_at) values
      ('k-open', ${ids.alice}, 0.16, 62.5, 'open', 0, ${at(45)}, null),
      ('k-won', ${ids.bob}, 0.2, 50, 'won', 144, ${at(20)}, ${at(60)}),
      ('k-lost', ${ids.alice}, 0.24, 41.67, 'lost', 0, ${at(10)}, ${at(60)})
  `);
  await db.query(sql`
    insert into combo_legs (combo_id, leg_index, market_id, outcome_index, chance_at_call, status) values
      ('k-open', 0, 'm1', 0, 0.4, 'open'), ('k-open', 1, 'm3', 1, 0.4, 'open'),
      ('k-won', 0, 'm2', 0, 0.4, 'won'), ('k-won', 1, 'm3', 0, 0.5, 'won'),
      ('k-lost', 0, 'm2', 1, 0.6, 'lost'), ('k-lost', 1, 'm1', 0, 0.4, 'open')
  `);
  return ids;
}
