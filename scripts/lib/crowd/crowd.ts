import type { Redis } from 'ioredis';
import { z } from 'zod';
import { eventually } from '@pm/shared/wait';
import type { Logger } from '@pm/shared/logger';
import { sql, type Db } from '@pm/shared/db';
import type { Records } from '@pm/shared/records';
import { crowdWrite } from './write.js';
import { callableMarkets, openMarketIds, type CallableMarket, type CallableQuery } from './markets.js';
import { PERSONAS, type Persona } from './people.js';
import { copyThesis, fadeThesis, pick, thesisFor, updateFor, type Random } from './theses.js';

/**
 * The demo crowd: people who make calls, copy and fade each other, post thesis updates and build
 * combos — all through the service's own write path (`@pm/shared/records`), at live prices. It never
 * writes a status: every settlement goes through the exchange → ingestor → settlement worker.
 *
 * So that a fresh demo shows every state within a minute, the crowd runs a "showcase" once: regulars
 * call a handful of markets (backdated by hours or days, so their history looks lived-in), then the
 * crowd asks the SIMULATOR to resolve those markets now (`POST /_sim/resolve`; winners drawn at the
 * markets' own chances, two of them voided). That control exists only on the bundled simulator, which
 * is the demo's exchange; the crowd never runs against the real one (the run line starts it only with
 * the simulator). Afterwards it keeps making a call every few seconds and resolves one called market
 * on the simulator now and then, so records keep moving.
 */

export interface CrowdDeps {
  records: Records;
  db: Db;
  redis: Redis;
  prefix: string;
  /** The simulator's base URL (its `/_sim/resolve` control). */
  simUrl: string;
  /** The simulator's control token (SIM_CONTROL_TOKEN, handed over by the run line). */
  simToken: string | undefined;
  logger: Logger;
  clock?: () => number;
  random?: Random;
  /** Mean milliseconds between two crowd actions after the showcase. Default 3000. */
  everyMs?: number;
  /** Milliseconds between two simulator resolutions of a called market. Default 90 s. */
  resolveEveryMs?: number;
}

export interface Crowd {
  /** Create or reuse the people, run the showcase when the database has not seen it, then act periodically. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** People who call every showcase market: at least 10 of them end with 5 or more settled calls. */
const REGULARS = 14;
/** Showcase markets resolved with a winner, and voided. */
const WINNERS = 6;
const VOIDS = 2;
const HOUR = 3_600_000;
/** Categories whose markets do not belong to a match in play: resolving them early surprises nobody watching a game. */
const QUIET_CATEGORIES = new Set(['Politics', 'Economy', 'Tech', 'Culture', 'Crypto']);
/** Open markets whose live prices one action reads (markets.ts): the crowd picks among these. */
const SAMPLE = 200;
/** How long the list of open markets the crowd samples from is kept. */
const OPEN_IDS_MAX_AGE_MS = 30_000;

export function createCrowd(deps: CrowdDeps): Crowd {
  const { records, db, logger } = deps;
  const clock = deps.clock ?? (() => Date.now());
  const random = deps.random ?? Math.random;
  const everyMs = deps.everyMs ?? 3000;
  const resolveEveryMs = deps.resolveEveryMs ?? 90_000;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let acting: Promise<void> = Promise.resolve();
  let lastResolveAt = clock();

  const attempt = <T>(what: string, op: (key: string) => Promise<T>) => crowdWrite(logger, what, op);

  async function ensurePeople(): Promise<void> {
    const now = clock();
    for (const [i, p] of PERSONAS.entries()) {
      await attempt('createUser', () =>
        records.createUser({
          handle: p.handle,
          displayName: p.displayName,
          avatar: p.avatar,
          bio: p.bio,
          interests: p.interests,
          joinedAt: new Date(now - (200 - i * 5) * 24 * HOUR),
        }),
      );
    }
    // Each person follows the next two to six people: a fixed graph, so a restart adds nothing.
    for (const [i, p] of PERSONAS.entries()) {
      for (let k = 1; k <= 2 + (i % 5); k++) {
        const other = PERSONAS[(i + k * 3) % PERSONAS.length];
        if (other && other.handle !== p.handle) await attempt('follow', () => records.follow(p.handle, other.handle));
      }
    }
  }

  /** True once every settled status, and won and lost combos, exist: the showcase already ran. */
  async function showcaseDone(): Promise<boolean> {
    // inputs: none. outputs: settled call statuses present and settled combo statuses present.
    const [row] = await db.query(sql`
      select (select count(distinct status) from calls where status <> 'open')::int as calls,
             (select count(distinct status) from combos where status in ('won', 'lost'))::int as combos
    `);
    const parsed = z.object({ calls: z.number(), combos: z.number() }).parse(row);
    return parsed.calls === 3 && parsed.combos === 2;
  }

  /** The open markets to sample from: re-read every OPEN_IDS_MAX_AGE_MS, or sooner while there are few. */
  let open: { at: number; ids: string[] } | undefined;
  async function openIds(): Promise<string[]> {
    if (open === undefined || open.ids.length < SAMPLE || clock() - open.at >= OPEN_IDS_MAX_AGE_MS) open = { at: clock(), ids: await openMarketIds(db) };
    return open.ids;
  }

  /** Callable markets among a random sample of the open ones, or among `ids`. */
  const callable = async (query?: CallableQuery) =>
    callableMarkets(db, deps.redis, deps.prefix, clock(), query ?? { sample: { size: SAMPLE, random, of: await openIds() } });

  /** The callable markets once there are `min` of them (or the crowd stops), else what there is after `timeoutMs`. */
  function waitForMarkets(min: number, timeoutMs: number): Promise<CallableMarket[]> {
    return eventually(() => callable(), (markets) => markets.length >= min || stopped, { timeoutMs, everyMs: 1000 });
  }

  /** Ask the simulator to resolve a market now. `winner` null voids it. */
  async function resolveOnSimulator(marketId: string, winner: number | null): Promise<boolean> {
    try {
      const res = await fetch(`${deps.simUrl}/_sim/resolve`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${deps.simToken ?? ''}` },
        body: JSON.stringify({ market_id: marketId, winning_outcome_index: winner, announce: true }),
        signal: AbortSignal.timeout(5000),
      });
      if (!res.ok) logger.warn({ marketId, status: res.status, body: await res.text() }, 'simulator refused a resolution');
      return res.ok;
    } catch (err) {
      logger.warn({ marketId, err: err instanceof Error ? err.message : String(err) }, 'simulator unreachable for a resolution');
      return false;
    }
  }

  const drawWinner = (m: CallableMarket) => (random() < (m.chances[0] ?? 0.5) ? 0 : 1);
  const drawOutcome = drawWinner;
  const ago = (ms: number) => new Date(clock() - ms);

  async function call(p: Persona, m: CallableMarket, outcomeIndex: number, extra: { madeAt?: Date; copiedFrom?: string; isFade?: boolean; thesis?: string } = {}) {
    const thesis = extra.thesis ?? thesisFor(random, m.outcomes[outcomeIndex] ?? 'This', m.chances[outcomeIndex] ?? 0.5);
    return attempt('recordCall', (key) =>
      records.recordCall({
        handle: p.handle,
        marketId: m.id,
        outcomeIndex,
        thesis,
        ...(extra.copiedFrom ? { copiedFrom: extra.copiedFrom } : {}),
        ...(extra.isFade ? { isFade: true } : {}),
        ...(extra.madeAt ? { madeAt: extra.madeAt } : {}),
        key,
      }),
    );
  }

  async function showcase(): Promise<void> {
    const markets = await waitForMarkets(WINNERS + VOIDS + 4, 120_000);
    if (markets.length < WINNERS + VOIDS + 2) {
      logger.warn({ callable: markets.length }, 'too few markets with live prices for the showcase; skipping it');
      return;
    }
    // One market per event, quiet categories first, so resolving them never closes a match in play.
    const seen = new Set<string>();
    const ordered = [...markets.filter((m) => QUIET_CATEGORIES.has(m.category)), ...markets.filter((m) => !QUIET_CATEGORIES.has(m.category))];
    const doomed: CallableMarket[] = [];
    for (const m of ordered) {
      if (doomed.length === WINNERS + VOIDS) break;
      if (seen.has(m.eventId)) continue;
      seen.add(m.eventId);
      doomed.push(m);
    }
    const winners = doomed.slice(0, WINNERS).map((m) => ({ market: m, winner: drawWinner(m) }));
    const voids = doomed.slice(WINNERS);
    const others = markets.filter((m) => !seen.has(m.eventId));
    const regulars = PERSONAS.slice(0, REGULARS);

    // Regulars call every winner market, the first two on opposite sides (so both won and lost
    // calls exist whatever the draw), the rest by the market's chance, some copying or fading the
    // first caller. Backdated: the leads 3 days ago, everyone else later.
    for (const [j, { market }] of winners.entries()) {
      const lead = await call(regulars[0] as Persona, market, 0, { madeAt: ago(72 * HOUR - j * 10 * 60_000) });
      await call(regulars[1] as Persona, market, 1, { madeAt: ago(71 * HOUR - j * 10 * 60_000) });
      for (const p of regulars.slice(2)) {
        const madeAt = ago((1 + random() * 60) * HOUR);
        const roll = random();
        if (lead && roll < 0.2) await call(p, market, 0, { madeAt, copiedFrom: lead.id, thesis: copyThesis(random, regulars[0]?.handle ?? '') });
        else if (lead && roll < 0.3) await call(p, market, 1, { madeAt, copiedFrom: lead.id, isFade: true, thesis: fadeThesis(random, regulars[0]?.handle ?? '', market.outcomes[1] ?? 'No') });
        else await call(p, market, drawOutcome(market), { madeAt });
      }
    }
    for (const market of voids) {
      for (const p of regulars.slice(0, 6)) await call(p, market, drawOutcome(market), { madeAt: ago((2 + random() * 40) * HOUR) });
    }

    // Combos: won (every leg on a winner), lost (one leg on a loser), void (every leg on a voided
    // market), open (legs on markets that stay open).
    const leg = (m: CallableMarket, outcomeIndex: number) => ({ marketId: m.id, outcomeIndex });
    const [w0, w1, w2, w3] = winners;
    const combos: Array<[Persona | undefined, Array<{ marketId: string; outcomeIndex: number }>]> = [];
    if (w0 && w1 && w2 && w3) {
      combos.push([regulars[2], [leg(w0.market, w0.winner), leg(w1.market, w1.winner)]]);
      combos.push([regulars[3], [leg(w1.market, w1.winner), leg(w2.market, w2.winner), leg(w3.market, w3.winner)]]);
      combos.push([regulars[4], [leg(w0.market, 1 - w0.winner), leg(w2.market, w2.winner)]]);
      combos.push([regulars[5], [leg(w3.market, 1 - w3.winner), leg(w1.market, w1.winner)]]);
    }
    const [v0, v1] = voids;
    if (v0 && v1) combos.push([regulars[6], [leg(v0, 0), leg(v1, 1)]]);
    for (let k = 0; k + 1 < others.length && k < 6; k += 2) {
      const a = others[k];
      const b = others[k + 1];
      if (a && b) combos.push([PERSONAS[REGULARS + k], [leg(a, drawOutcome(a)), leg(b, drawOutcome(b))]]);
    }
    for (const [p, legs] of combos) {
      const madeAt = ago((1 + random() * 20) * HOUR);
      if (p) await attempt('recordCombo', (key) => records.recordCombo({ handle: p.handle, legs, madeAt, key }));
    }

    // Everyone else makes an open call or two; some regulars explain themselves further.
    for (const p of PERSONAS.slice(REGULARS)) {
      for (let n = 0; n < 2 && others.length > 0; n++) {
        const m = pick(random, others);
        await call(p, m, drawOutcome(m), { madeAt: ago(random() * 6 * HOUR) });
      }
    }
    await postThesisUpdates(8);

    for (const { market, winner } of winners) await resolveOnSimulator(market.id, winner);
    for (const market of voids) await resolveOnSimulator(market.id, null);
    logger.info({ winners: winners.length, voids: voids.length, combos: combos.length }, 'crowd showcase made; its markets are resolving on the simulator');
  }

  /** Thesis updates on up to n of the newest open calls. */
  async function postThesisUpdates(n: number): Promise<void> {
    // inputs: a count. outputs: ids of the newest open calls.
    const rows = await db.query(sql`select id from calls where status = 'open' order by made_at desc limit ${n}`);
    for (const r of rows) {
      const { id } = z.object({ id: z.string() }).parse(r);
      const body = updateFor(random);
      await attempt('addThesisUpdate', (key) => records.addThesisUpdate(id, body, { key }));
    }
  }

  /** A recent open call by someone else on a market still callable, with that market, to copy or fade. */
  async function recentCallToFollow(p: Persona) {
    // inputs: the caller's handle. outputs: up to 20 recent open calls by others.
    const rows = await db.query(sql`
      select c.id, c.market_id, c.outcome_index, u.handle
      from calls c join users u on u.id = c.user_id
      where c.status = 'open' and lower(u.handle) <> lower(${p.handle})
      order by c.made_at desc
      limit 20
    `);
    const parsed = rows.map((r: unknown) => z.object({ id: z.string(), market_id: z.string(), outcome_index: z.number(), handle: z.string() }).parse(r));
    const markets = await callable({ ids: [...new Set(parsed.map((c) => c.market_id))] });
    const followable = parsed.filter((c) => markets.some((m) => m.id === c.market_id));
    if (followable.length === 0) return undefined;
    const target = pick(random, followable);
    return { target, market: markets.find((m) => m.id === target.market_id)! };
  }

  /** One action of one person. */
  async function act(): Promise<void> {
    const markets = await callable();
    if (markets.length === 0) return;
    const p = pick(random, PERSONAS);
    const liked = markets.filter((m) => p.interests.some((i) => i.split(':')[0] === m.category));
    const pool = liked.length > 0 && random() < 0.7 ? liked : markets;
    const roll = random();
    if (roll < 0.15 || roll >= 0.93) {
      const followed = await recentCallToFollow(p);
      if (followed) {
        const { target, market } = followed;
        const fade = roll >= 0.93;
        const outcomeIndex = fade ? 1 - target.outcome_index : target.outcome_index;
        await call(p, market, outcomeIndex, {
          copiedFrom: target.id,
          isFade: fade,
          thesis: fade ? fadeThesis(random, target.handle, market.outcomes[outcomeIndex] ?? 'the other side') : copyThesis(random, target.handle),
        });
        return;
      }
    }
    if (roll < 0.25) return postThesisUpdates(1);
    if (roll < 0.33 && pool.length >= 2) {
      const legs: Array<{ marketId: string; outcomeIndex: number }> = [];
      const used = new Set<string>();
      const size = 2 + Math.floor(random() * 2);
      for (let tries = 0; legs.length < size && tries < 20; tries++) {
        const m = pick(random, pool);
        if (used.has(m.eventId)) continue;
        used.add(m.eventId);
        legs.push({ marketId: m.id, outcomeIndex: drawOutcome(m) });
      }
      if (legs.length >= 2) await attempt('recordCombo', (key) => records.recordCombo({ handle: p.handle, legs, key }));
      return;
    }
    const m = pick(random, pool);
    await call(p, m, drawOutcome(m));
  }

  /** Now and then, resolve (on the simulator) a market the crowd has open calls on, so records keep moving. */
  async function maybeResolve(): Promise<void> {
    if (clock() - lastResolveAt < resolveEveryMs) return;
    lastResolveAt = clock();
    // inputs: the quiet categories. outputs: the 20 markets of theirs with the most open calls, most first.
    const rows = await db.query(sql`
      select c.market_id from calls c join markets m on m.id = c.market_id join events e on e.id = m.event_id
      where c.status = 'open' and e.category = any(${[...QUIET_CATEGORIES]}::text[])
      group by c.market_id order by count(*) desc limit 20
    `);
    const ids = rows.map((r: unknown) => z.object({ market_id: z.string() }).parse(r).market_id);
    // The first of them still callable (open, with a live price).
    const [market] = await callable({ ids });
    if (market) await resolveOnSimulator(market.id, random() < 0.1 ? null : drawWinner(market));
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      acting = (async () => {
        try {
          await act();
          await maybeResolve();
        } catch (err) {
          logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'crowd action failed');
        }
      })();
      void acting.finally(schedule);
    }, everyMs * (0.5 + random()));
  }

  return {
    async start() {
      await ensurePeople();
      if (!(await showcaseDone())) await showcase();
      else logger.info('crowd showcase already in the database; carrying on');
      lastResolveAt = clock();
      schedule();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await acting;
    },
  };
}
