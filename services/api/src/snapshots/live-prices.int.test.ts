import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { marketEventResponseSchema, type MarketEventResponse } from '@pm/shared/api';
import { oddsForChance } from '@pm/shared/domain';
import { snapshotEtag } from '@pm/shared/redis';
import type { EventSnapshot } from '@pm/shared/snapshots';
import { appendStreamMessage, priceMessage } from '@pm/shared/stream';
import { eventually } from '@pm/shared/wait';
import { event, startSeededApps, writeSnapshot, type RunningApp } from '../testing/fixtures.js';

/**
 * The live-price overlay through a running API: a price message on the event
 * stream (what the ingestor writes when a chance moves) shows in `/api/v1/markets/{slug}` without
 * any new snapshot; a snapshot built before the move does not take it back; the worker's build of
 * the same page is the same version (same ETag, 304 still holds); a settled market is not moved.
 */

let redis: Redis;
let prefix: string;
let api: RunningApp;

const base = event('live-overlay', 'Who wins?', 'Politics', ['Will A win?', 'Will B win?']);
const [open, settled] = base.markets;
if (open === undefined || settled === undefined) throw new Error('fixture has two markets');
const settledMarket = { ...settled, closed: true, resolved_outcome: 0, resolved_at: '2026-11-01T00:00:00.000Z' };
const basis = { [open.id]: { day_ago: 0.2 } };

async function writeEvent(payload: EventSnapshot): Promise<string> {
  const body = JSON.stringify(payload);
  const etag = snapshotEtag(body);
  await writeSnapshot(redis, prefix, `event:${base.slug}`, payload, etag);
  return etag;
}

async function page(etag?: string): Promise<{ status: number; etag: string | null; body?: MarketEventResponse }> {
  const res = await fetch(`${api.base}/api/v1/markets/${base.slug}`, { headers: etag ? { 'if-none-match': etag } : {} });
  if (res.status !== 200) {
    await res.body?.cancel();
    return { status: res.status, etag: res.headers.get('etag') };
  }
  return { status: 200, etag: res.headers.get('etag'), body: marketEventResponseSchema.parse(await res.json()) };
}

const chanceOf = (p: Awaited<ReturnType<typeof page>>, market: number, outcome = 0) => p.body?.event.markets[market]?.outcomes[outcome]?.chance;

async function move(marketId: string, outcomeIndex: number, chance: number): Promise<void> {
  const ref = { eventSlug: base.slug, marketId, outcomeIndex, name: outcomeIndex === 0 ? 'Yes' : 'No' };
  await appendStreamMessage(redis, prefix, priceMessage(ref, chance, Date.now()));
}

/** Everything this file starts, stopped newest first after it. */
const teardown = new AsyncDisposableStack();
afterAll(() => teardown.disposeAsync());

beforeAll(async () => {
  const started = await startSeededApps(teardown, 'live_overlay', async () => {});
  ({ redis, api } = started);
  prefix = started.testRedis.prefix;
});

describe('live prices over the event page', () => {
  it('shows a moved chance before any snapshot has it, and a later build of the same page keeps its version', async () => {
    await writeEvent({ event: { ...base, markets: [open, settledMarket] }, overlay: basis });
    const first = await page();
    expect(chanceOf(first, 0)).toBe(0.25);

    // The book of the settled market moves too (books linger after resolution): never shown.
    await move(settled.id, 0, 0.42);
    await move(open.id, 0, 0.61);
    const moved = await eventually(page, (p) => chanceOf(p, 0) === 0.61, { timeoutMs: 10_000, everyMs: 20 });
    expect(chanceOf(moved, 0), 'the moved chance through the API, with no new snapshot').toBe(0.61);
    expect(moved.etag).not.toBe(first.etag);
    const m0 = moved.body?.event.markets[0];
    // With no quotes in the message the page says none (null), as the worker's build from it would.
    expect(m0?.outcomes[0]).toEqual({ name: 'Yes', chance: 0.61, odds: oddsForChance(0.61), best_bid: null, best_ask: null, spread: null, last_trade_price: null, closing_chance: null });
    expect(m0?.outcomes[1]).toEqual(open.outcomes[1]);
    expect(m0?.change_24h).toBe(0.41);
    expect(moved.body?.event.markets[1]).toEqual(settledMarket);

    // A build that read the chance before it moved (the title changed meanwhile) does not take the price back.
    await writeEvent({ event: { ...base, title: 'Who wins now?', markets: [open, settledMarket] }, overlay: basis });
    const rebuilt = await eventually(page, (p) => p.body?.event.title === 'Who wins now?', { timeoutMs: 10_000, everyMs: 20 });
    expect(chanceOf(rebuilt, 0)).toBe(0.61);

    // The worker's build from the moved chance is exactly the page shown: same ETag, and a 304 still holds.
    const built = { ...open, outcomes: [m0!.outcomes[0]!, open.outcomes[1]!], change_24h: 0.41 };
    const builtEtag = await writeEvent({ event: { ...base, title: 'Who wins now?', markets: [built, settledMarket] }, overlay: basis });
    const after = await page();
    expect(after.body).toEqual(rebuilt.body);
    expect(after.etag).toBe(rebuilt.etag);
    expect((await page(rebuilt.etag ?? undefined)).status).toBe(304);
    // The version held is the worker's own (it names the same body).
    expect(api.api.snapshots.version(`event:${base.slug}`)).toBe(builtEtag);
  });
});
