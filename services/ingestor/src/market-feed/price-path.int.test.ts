import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, quietLogger, TEST_TUNING, type Harness } from '../testing/harness.js';
import { gammaEvent, waitFor } from '../testing/fake-exchange.js';
import { createIngestor, type Ingestor } from '../ingestor.js';
import type { SnapshotTriggerLike } from '../common/dirty-events.js';

/**
 * The ingestor's half of "a price is visible as soon as it is known" (docs/design.md "The read path"):
 * an event handed to the snapshot trigger is rebuilt from the chances in Redis at that moment and
 * is not marked again, so a mark that overtakes its chance's write leaves the old price on show
 * until something else touches the event (15–17 s on replayed bursts).
 *
 * The trigger here records, for each mark, the chance Redis held for the event's token right then.
 */

const tokens = Array.from({ length: 8 }, (_, i) => `20000000000000000000000000000000000000000000000000000000000000000000000${String(i).padStart(2, '0')}`);
const tokenOf = (event: number) => tokens[event * 2] as string;

const book = (asset: string, mid: number, ts: number) => ({
  event_type: 'book',
  asset_id: asset,
  market: '0xm',
  bids: [{ price: (mid - 0.01).toFixed(2), size: '100' }],
  asks: [{ price: (mid + 0.01).toFixed(2), size: '100' }],
  timestamp: String(ts),
  hash: `h${ts}`,
});

let h: Harness;
let ingestor: Ingestor;
/** Per event id, the chance Redis held for its Yes token at each mark, in order. */
const seenAtMark = new Map<string, Array<string | null>>();

beforeAll(async () => {
  h = await createHarness('ingestor_price_path');
  for (let e = 0; e < 4; e++) {
    h.fake.events.push(gammaEvent(`pe${e}`, [{ id: `pm${e}`, tokens: [tokens[e * 2] as string, tokens[e * 2 + 1] as string], prices: ['0.5', '0.5'] }]));
  }
  const recording: SnapshotTriggerLike = {
    async markEventsDirty(ids) {
      for (const id of ids) {
        const event = Number(id.replace('pe', ''));
        const chance = await h.redis.redis.hget(h.keys.chances, tokenOf(event));
        seenAtMark.set(id, [...(seenAtMark.get(id) ?? []), chance]);
      }
    },
    markCatalogChanged: async () => {},
    close: async () => {},
  };
  ingestor = createIngestor({ config: h.config, db: h.database.db, redis: h.redis.redis, logger: quietLogger, trigger: recording, tuning: TEST_TUNING });
  await ingestor.start();
  await waitFor(() => h.fake.marketSockets[0]?.received.length, 5_000, 'market subscribe');
  await ingestor.flush();
});

afterAll(async () => {
  await ingestor?.stop();
  await h?.cleanup();
});

describe('a moved chance on its way to the snapshots', () => {
  it('is in Redis before its event is marked dirty, also for a frame arriving while the previous batch is on its way', async () => {
    seenAtMark.clear();
    // A burst over three events, then one more frame on a fourth event as soon as the burst's chances
    // are on their way, then silence: the moment the old 50 ms chance and 100 ms dirty-event timers
    // let the fourth event's mark overtake its chance.
    const writes = ingestor.stats().chances.writes;
    [0.31, 0.42, 0.63].forEach((mid, e) => h.fake.broadcastMarket(book(tokenOf(e), mid, 10 + e)));
    await waitFor(() => ingestor.stats().chances.writes > writes, 3_000, "the burst's chances sent");
    h.fake.broadcastMarket(book(tokenOf(3), 0.81, 20));
    await waitFor(() => seenAtMark.has('pe3'), 3_000, 'pe3 marked dirty');
    await ingestor.flush();
    // Every mark of an event saw the chance its frame set (never the catalog's 0.5 it replaced).
    expect(Object.fromEntries(seenAtMark)).toEqual({ pe0: ['0.31'], pe1: ['0.42'], pe2: ['0.63'], pe3: ['0.81'] });
  });
});
