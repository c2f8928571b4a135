import type { Logger } from '@pm/shared/logger';
import type { Market } from '@pm/shared/api';
import { chanceChange, oddsForChance, quoteOf, shownChance, type Quote } from '@pm/shared/domain';
import type { SnapshotName } from '@pm/shared/redis';
import type { EventSnapshot } from '@pm/shared/snapshots';
import type { StreamEntry } from '@pm/shared/stream';

/**
 * The live-price overlay (docs/design.md "The read path"): a price change shows in
 * `/api/v1/markets/{slug}` as soon as this process hears of it, without waiting for the worker to
 * rebuild the event's snapshot and announce it.
 *
 * The ingestor writes every displayed chance that moved to the event stream (`price` messages,
 * @pm/shared/stream) at the moment it writes it to Redis; the stream hub's one reader hands them
 * here. Each is held for `holdMs` and laid over the event snapshot the store holds: the outcome's
 * chance, its odds (`oddsForChance`, the worker's own function) and, for a market's first outcome,
 * `change_24h` (`chanceChange` from the day-ago chance the snapshot carries in `overlay`). So the
 * page is, byte for byte, the one the worker will build from that chance; a settled market (absent
 * from `overlay`) keeps its final chances.
 *
 * Why a hold and not "until the snapshot shows it": a snapshot can show a chance and still be older
 * than the overlay (A → B → A), so only time retires a live price: by then the worker has built the
 * page from it (a build takes well under a second, its sweep and periodic full build follow within
 * 30 s), and a price message the stream lost can mislead for no longer than that. The stream is one
 * ordered log and one ingestor owns a token, so the newest message of an outcome is its newest chance.
 */

export interface SnapshotOverlay {
  /** The snapshot as it shows now: `data` itself when nothing applies (or differs), else a patched copy. */
  apply(name: SnapshotName, data: unknown): unknown;
  /** `listener` hears the snapshots whose overlay changed (a price arrived or expired). */
  watch(listener: (names: ReadonlySet<SnapshotName>) => void): void;
}

export interface LivePrices extends SnapshotOverlay {
  /** Entries read from the event stream; only `price` messages are used. */
  offer(entries: readonly StreamEntry[]): void;
  /** Live prices held now. */
  size(): number;
  stop(): void;
}

export interface LivePricesOptions {
  clock: () => number;
  logger: Logger;
  /** How long a live price is laid over the snapshot (default 10 s). */
  holdMs?: number;
  /** How often expired prices are dropped (default 1 s). */
  sweepMs?: number;
}

interface Live {
  marketId: string;
  index: number;
  chance: number;
  quote: Quote;
  until: number;
}

/** A held price in the order it expires: `until` only grows, so the oldest is always first. */
interface Expiry {
  slug: string;
  key: string;
  live: Live;
}

const EVENT = 'event:';

/**
 * The fields of a `price` message this overlay uses (@pm/shared/api priceMessageSchema), checked by
 * hand rather than through the zod schema: at 5,000 open events the ingestor's first books are some
 * 21,000 messages in a second, and parsing each through zod was a third of what this process
 * allocated in its first minute, which set its peak RSS. The stream is written by our own ingestor;
 * this check only keeps a malformed entry from being laid over a page.
 */
function priceOf(data: string): { event: string; marketId: string; index: number; chance: number; quote: Quote } | undefined {
  let message: unknown;
  try {
    message = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (typeof message !== 'object' || message === null) return undefined;
  const { event, market_id: marketId, outcome_index: index, chance, best_bid: bid, best_ask: ask, last_trade_price: last } = message as Record<string, unknown>;
  if (typeof event !== 'string' || event === '' || typeof marketId !== 'string') return undefined;
  if (typeof index !== 'number' || !Number.isInteger(index) || index < 0) return undefined;
  if (typeof chance !== 'number' || !(chance >= 0 && chance <= 1)) return undefined;
  // As the worker shows it (0, 1 or the exchange's ticks), so both make the same page.
  const num = (v: unknown) => (typeof v === 'number' ? v : null);
  return { event, marketId, index, chance: shownChance(chance), quote: quoteOf(num(bid), num(ask), num(last)) };
}

export function createLivePrices(opts: LivePricesOptions): LivePrices {
  const holdMs = opts.holdMs ?? 10_000;
  /** Event slug → `marketId\0outcomeIndex` → the newest live price. */
  const byEvent = new Map<string, Map<string, Live>>();
  const listeners: Array<(names: ReadonlySet<SnapshotName>) => void> = [];
  let held = 0;
  let malformed = 0;

  const notify = (names: ReadonlySet<SnapshotName>) => {
    if (names.size === 0) return;
    for (const listener of listeners) {
      try {
        listener(names);
      } catch (err) {
        opts.logger.error({ err }, 'live-price listener failed');
      }
    }
  };

  /** Every price offered, oldest first; an entry whose price was replaced since is skipped when it comes up. */
  let expiries: Expiry[] = [];
  let next = 0;

  // Only what has expired is looked at, not every held price each second.
  const sweep = setInterval(() => {
    const now = opts.clock();
    const changed = new Set<SnapshotName>();
    while (next < expiries.length && expiries[next]!.live.until <= now) {
      const { slug, key, live } = expiries[next++]!;
      const prices = byEvent.get(slug);
      if (prices?.get(key) !== live) continue;
      prices.delete(key);
      held--;
      changed.add(`${EVENT}${slug}`);
      if (prices.size === 0) byEvent.delete(slug);
    }
    if (next > 1024 && next * 2 > expiries.length) {
      expiries = expiries.slice(next);
      next = 0;
    }
    notify(changed);
  }, opts.sweepMs ?? 1_000);
  sweep.unref();

  return {
    offer(entries) {
      const changed = new Set<SnapshotName>();
      const until = opts.clock() + holdMs;
      for (const entry of entries) {
        if (entry.topic !== 'price') continue;
        const price = priceOf(entry.data);
        if (price === undefined) {
          if (malformed++ % 1000 === 0) opts.logger.warn({ id: entry.id, malformed }, 'price message not understood; not overlaid');
          continue;
        }
        const { event, marketId, index, chance, quote } = price;
        let prices = byEvent.get(event);
        if (prices === undefined) byEvent.set(event, (prices = new Map()));
        const key = `${marketId}\u0000${index}`;
        if (!prices.has(key)) held++;
        const live: Live = { marketId, index, chance, quote, until };
        prices.set(key, live);
        expiries.push({ slug: event, key, live });
        changed.add(`${EVENT}${event}`);
      }
      notify(changed);
    },

    apply(name, data) {
      if (!name.startsWith(EVENT)) return data;
      const prices = byEvent.get(name.slice(EVENT.length));
      const snapshot = data as EventSnapshot;
      const basis = snapshot.overlay;
      if (prices === undefined || basis === undefined) return data;
      const now = opts.clock();
      let markets: Market[] | undefined;
      for (const live of prices.values()) {
        const dayAgo = basis[live.marketId]?.day_ago;
        if (live.until <= now || dayAgo === undefined) continue;
        const list = markets ?? snapshot.event.markets;
        const at = list.findIndex((m) => m.id === live.marketId);
        const market = list[at];
        const outcome = market?.outcomes[live.index];
        const q = live.quote;
        const same =
          outcome !== undefined &&
          outcome.chance === live.chance &&
          outcome.best_bid === q.best_bid &&
          outcome.best_ask === q.best_ask &&
          outcome.last_trade_price === q.last_trade_price;
        if (market === undefined || outcome === undefined || same) continue;
        const outcomes = [...market.outcomes];
        // Key for key what the worker writes (payloads.ts buildQuotedOutcomes), so the page is the same bytes.
        outcomes[live.index] = {
          name: outcome.name,
          chance: live.chance,
          odds: oddsForChance(live.chance),
          best_bid: q.best_bid,
          best_ask: q.best_ask,
          spread: q.spread,
          last_trade_price: q.last_trade_price,
          closing_chance: outcome.closing_chance,
        };
        markets ??= [...snapshot.event.markets];
        markets[at] = {
          ...market,
          outcomes,
          change_24h: live.index === 0 && dayAgo !== null ? chanceChange(live.chance, dayAgo) : market.change_24h,
        };
      }
      return markets === undefined ? data : { ...snapshot, event: { ...snapshot.event, markets } };
    },

    watch(listener) {
      listeners.push(listener);
    },
    size: () => held,
    stop() {
      clearInterval(sweep);
    },
  };
}
