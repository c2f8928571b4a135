import type { Redis } from 'ioredis';
import { z } from 'zod';
import { redisKeys } from '@pm/shared/redis';
import { httpGet } from './http-get.js';
import type { Stack } from './stack.js';
import { sleep } from '@pm/shared/wait';

/**
 * Price bursts through the simulator, read back through the API over HTTP, as the issue measured
 * them on replayed real frames: a burst of frames over many events, one more frame
 * `trailingGapMs` later, then silence. Used by the e2e test (a correctness bound) and by
 * `npm run bench:ingest` (the figures).
 *
 * A frame is `POST /_sim/book` on the Yes token of an event's first open market: the simulator
 * publishes the book on its market socket before it answers, and its answer carries the frame's
 * `timestamp` (its clock, the same machine's), which is when the delay starts. The chance shows as
 * the book's midpoint (docs/design.md's display rule: spread ≤ 0.10), so bid = c − 0.01, ask = c + 0.01.
 */

export interface PriceTarget {
  slug: string;
  marketId: string;
  /** The market's first outcome's token: `outcomes[0].chance` in the API follows its book. */
  token: string;
}

export interface Change {
  target: PriceTarget;
  chance: number;
  /** The simulator's clock (ms since the epoch) when it sent the frame. */
  sentAt: number;
}

export interface Seen extends Change {
  /** ms from the frame to the first API response showing its chance; undefined: never within the deadline. */
  delayMs: number | undefined;
  /** What the API showed last (for failure messages). */
  lastShown: number | undefined;
  /** ms from the frame to the start of the first read for it: no reader can see a change sooner. */
  firstReadMs: number;
}

export interface BurstResult {
  burst: Seen[];
  /** The frame sent `trailingGapMs` after the burst, on the burst's first event, then silence. */
  last: Seen;
}

const gammaEvents = z.array(
  z.object({
    slug: z.string(),
    markets: z.array(z.object({ id: z.string(), closed: z.boolean().nullish(), clobTokenIds: z.string() })),
  }),
);
const bookAnswer = z.object({ timestamp: z.coerce.number() });
const eventBody = z.object({
  event: z.object({ markets: z.array(z.object({ id: z.string(), outcomes: z.array(z.object({ chance: z.number() })) })) }),
});

/** Up to `count` open events of the simulator's catalog, one target (first open market) each. */
export async function priceTargets(stack: Stack, count: number): Promise<PriceTarget[]> {
  const res = await fetch(`${stack.simUrl}/events?active=true&closed=false&limit=${count}&offset=0`);
  const events = gammaEvents.parse(await res.json());
  return events.flatMap((e) => {
    const market = e.markets.find((m) => m.closed !== true);
    const token = market === undefined ? undefined : z.array(z.string()).parse(JSON.parse(market.clobTokenIds))[0];
    return market === undefined || token === undefined ? [] : [{ slug: e.slug, marketId: market.id, token }];
  });
}

/** The target of one market of an event the API lists (its first outcome's token, from the simulator's catalog). */
export async function priceTarget(stack: Stack, slug: string, marketId: string): Promise<PriceTarget> {
  const res = await fetch(`${stack.simUrl}/events?slug=${encodeURIComponent(slug)}`);
  const market = gammaEvents.parse(await res.json())[0]?.markets.find((m) => m.id === marketId);
  const token = market === undefined ? undefined : z.array(z.string()).parse(JSON.parse(market.clobTokenIds))[0];
  if (token === undefined) throw new Error(`the simulator's catalog has no market ${marketId} in event ${slug}`);
  return { slug, marketId, token };
}

/** What a reader showed of a target: its chance and the version (ETag) it read. */
export interface Shown {
  chance: number | undefined;
  etag: string | null;
}

/** Reads a target's chance; given what it showed last (`since`), may answer that at less cost when nothing changed. */
export type ShownReader = (target: PriceTarget, since?: Shown) => Promise<Shown>;

/** The chance of the target's market in an event resource (`{ event: … }`), undefined when not there. */
export function chanceIn(body: unknown, target: PriceTarget): number | undefined {
  const parsed = eventBody.safeParse(body);
  return parsed.success ? parsed.data.event.markets.find((m) => m.id === target.marketId)?.outcomes[0]?.chance : undefined;
}

/**
 * The target's chance as `GET /api/v1/markets/{slug}` shows it now (undefined: no such event or
 * market yet). With `since` (what an earlier call showed), the request is conditional: a 304 means
 * nothing changed, which costs the API no body, so a tight polling loop does not load it needlessly.
 */
async function readShown(stack: Stack, target: PriceTarget, since?: Shown): Promise<Shown> {
  const headers: Record<string, string> = since?.etag ? { 'if-none-match': since.etag } : {};
  const res = await httpGet(`${stack.apiUrl}/api/v1/markets/${encodeURIComponent(target.slug)}`, headers);
  if (res.status === 304 && since !== undefined) return since;
  if (res.status !== 200) return { chance: undefined, etag: null };
  return { chance: chanceIn(JSON.parse(res.text), target), etag: res.etag };
}

/**
 * Reads the event snapshot straight from Redis, as the worker wrote it (the etag first, the body
 * when it moved): the page the API serves once any live price laid over it has gone.
 */
export function snapshotReader(redis: Redis, prefix: string): ShownReader {
  const keys = redisKeys(prefix);
  return async (target, since) => {
    const key = keys.snapshot(`event:${target.slug}`);
    const etag = await redis.hget(key, 'etag');
    if (since !== undefined && etag === since.etag) return since;
    const body = await redis.hget(key, 'body');
    return { chance: body === null ? undefined : chanceIn(JSON.parse(body), target), etag };
  };
}

/** The target's chance as `GET /api/v1/markets/{slug}` shows it now (undefined: no such event or market yet). */
export async function apiChance(stack: Stack, target: PriceTarget): Promise<number | undefined> {
  return (await readShown(stack, target)).chance;
}

/** Sends one frame that moves the target's chance to `chance` (two decimals, in [0.02, 0.98]). */
export async function sendChance(stack: Stack, target: PriceTarget, chance: number): Promise<Change> {
  const res = await stack.simControl('/_sim/book', {
    token_id: target.token,
    bids: [{ price: (chance - 0.01).toFixed(2), size: '100' }],
    asks: [{ price: (chance + 0.01).toFixed(2), size: '100' }],
  });
  const body: unknown = await res.json();
  if (res.status !== 200) throw new Error(`POST /_sim/book for ${target.slug} answered ${res.status}: ${JSON.stringify(body)}`);
  return { target, chance, sentAt: bookAnswer.parse(body).timestamp };
}

const same = (a: number | undefined, b: number) => a !== undefined && Math.abs(a - b) < 1e-9;

/**
 * Polls `read` (the API by default: one conditional request in flight per change) in a tight loop
 * until it shows the change's chance or `deadlineMs` after the frame passes; measures to the read
 * that first showed it.
 */
export async function waitVisible(read: ShownReader, change: Change, deadlineMs: number): Promise<Seen> {
  let shown: Shown | undefined;
  const firstReadMs = Math.max(0, Date.now() - change.sentAt);
  for (;;) {
    shown = await read(change.target, shown).catch(() => shown);
    const now = Date.now();
    if (same(shown?.chance, change.chance)) return { ...change, delayMs: Math.max(0, now - change.sentAt), lastShown: shown?.chance, firstReadMs };
    if (now - change.sentAt > deadlineMs) return { ...change, delayMs: undefined, lastShown: shown?.chance, firstReadMs };
  }
}

/** Chance of target `i` in burst `round`: in [0.10, 0.89], different from the previous round's. */
function burstChance(i: number, round: number): number {
  return (10 + ((i * 37 + round * 11) % 80)) / 100;
}

/**
 * One burst: a frame on every target at once, one more frame on the first target `trailingGapMs`
 * later (a change arriving while the previous one is on its way), then nothing; every change is
 * awaited through the API (or `read`) from the moment the simulator answered its frame. The first target's burst change is overtaken by the last frame, so
 * only the last one is awaited for it. Needs at least two targets.
 */
export async function priceBurst(
  stack: Stack,
  targets: readonly PriceTarget[],
  round: number,
  opts: { trailingGapMs?: number; deadlineMs: number; read?: ShownReader },
): Promise<BurstResult> {
  const read = opts.read ?? ((target: PriceTarget, since?: Shown) => readShown(stack, target, since));
  const [first, ...rest] = targets;
  if (first === undefined || rest.length === 0) throw new Error('a burst needs at least two targets');
  const shown = await Promise.all(targets.map(async (t) => (await read(t)).chance));
  // Never "move" a chance to the value already shown: it would count as visible at once.
  const fresh = (chance: number, i: number) => (same(shown[i], chance) ? chance + 0.01 : chance);
  const sent = targets.map((t, i) => sendChance(stack, t, fresh(burstChance(i, round), i)));
  // Each change is read from the moment its frame is sent, not after the whole burst and the gap:
  // a reader that starts late cannot see a change sooner, and would time its own wait.
  const burstSeen = Promise.all(sent.slice(1).map(async (change) => waitVisible(read, await change, opts.deadlineMs)));
  await Promise.all(sent);
  await sleep(opts.trailingGapMs ?? 50);
  // 0.93 / 0.07 never occur in a burst, and alternate, so the last frame always moves the chance.
  const last = await sendChance(stack, first, round % 2 === 0 ? 0.93 : 0.07);
  const [lastSeen, burstResult] = await Promise.all([waitVisible(read, last, opts.deadlineMs), burstSeen]);
  return { burst: burstResult, last: lastSeen };
}

/** The changes of a burst that did not show within the deadline, in words. */
export function missed(result: BurstResult): string[] {
  return [...result.burst, result.last]
    .filter((s) => s.delayMs === undefined)
    .map((s) => `${s.target.slug} market ${s.target.marketId}: sent ${s.chance}, API still showed ${String(s.lastShown)}`);
}
