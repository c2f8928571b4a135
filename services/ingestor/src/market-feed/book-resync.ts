import type { Logger } from '@pm/shared/logger';
import { parseRestBook, type BookMessage } from '@pm/shared/exchange';
import type { Clock } from '../common/clock.js';
import { getJson } from '../common/http.js';
import { sleep } from '@pm/shared/wait';

/**
 * REST resync of books after a market socket reconnects (docs/protocol.md §1, §4). The resubscribe's
 * initial dump normally re-sends every book, but it may lag or miss tokens; a token that got no
 * book within `delayMs` of the resubscribe is fetched from `GET ${clobUrl}/book?token_id=`, one
 * request at a time and `paceMs` apart (the exchange throttles). A book that arrived over the ws
 * while the request was in flight wins: the REST answer is then dropped, as it may be older.
 * `refetch` queues one token at once on the same paced queue (its local book crossed).
 */

export interface BookResyncOptions {
  clobUrl: string;
  logger: Logger;
  clock: Clock;
  /** When the token's last book was applied (clock ms), undefined before any. */
  lastBookAt: (tokenId: string) => number | undefined;
  /** Still wanted: an unsubscribed token is not fetched. */
  isSubscribed: (tokenId: string) => boolean;
  applyBook: (m: BookMessage) => void;
  /** Grace for the initial dump before fetching (3 s). */
  delayMs?: number;
  /** Least time between two requests (100 ms). */
  paceMs?: number;
  /** Per-request timeout (5 s). */
  timeoutMs?: number;
}

export interface BookResyncStats {
  /** Resubscribes waiting for their grace to pass before they are checked. */
  waiting: number;
  /** Resubscribes that were checked. */
  resyncs: number;
  /** Books fetched and applied. */
  fetched: number;
  /** Requests that failed (network, HTTP status, unparseable body). */
  failed: number;
}

export interface BookResync {
  /** The socket holding `tokens` resubscribed at clock time `since`: fill what the dump missed. */
  afterResubscribe(tokens: readonly string[], since: number): void;
  /** Fetch one token's book now (queued behind others, paced): its local book went stale. */
  refetch(tokenId: string): void;
  stats(): BookResyncStats;
  close(): Promise<void>;
}

export function createBookResync(opts: BookResyncOptions): BookResync {
  const delayMs = opts.delayMs ?? 3_000;
  const paceMs = opts.paceMs ?? 100;
  const timeoutMs = opts.timeoutMs ?? 5_000;
  const stats = { resyncs: 0, fetched: 0, failed: 0 };
  const timers = new Set<NodeJS.Timeout>();
  /** Token → the resubscribe time it must have a book from. One queue for every socket keeps the pace global. */
  const pending = new Map<string, number>();
  let running: Promise<void> | null = null;
  let closed = false;
  const abort = new AbortController();

  const needsBook = (tokenId: string, since: number) => {
    const at = opts.lastBookAt(tokenId);
    return opts.isSubscribed(tokenId) && (at === undefined || at < since);
  };

  async function fetchBook(tokenId: string): Promise<BookMessage | null> {
    const url = `${opts.clobUrl}/book?token_id=${encodeURIComponent(tokenId)}`;
    const book = parseRestBook(await getJson(url, { timeoutMs, signal: abort.signal }), tokenId);
    if (!book) throw new Error('GET /book answered something that is not this token\'s book');
    return book;
  }

  async function drain() {
    while (!closed && pending.size > 0) {
      const [tokenId, since] = pending.entries().next().value as [string, number];
      pending.delete(tokenId);
      if (!needsBook(tokenId, since)) continue;
      try {
        const book = await fetchBook(tokenId);
        // Re-check: a ws book that landed meanwhile is at least as fresh as this answer.
        if (book && !closed && needsBook(tokenId, since)) {
          opts.applyBook(book);
          stats.fetched++;
        }
      } catch (err) {
        if (closed) return;
        stats.failed++;
        opts.logger.warn({ tokenId, err: err instanceof Error ? err.message : String(err) }, 'book resync failed');
      }
      if (pending.size > 0 && !closed) await sleep(paceMs);
    }
  }

  function kick() {
    running ??= drain().finally(() => {
      running = null;
      if (!closed && pending.size > 0) kick();
    });
  }

  return {
    afterResubscribe(tokens, since) {
      if (closed || tokens.length === 0) return;
      const list = [...tokens];
      const timer = setTimeout(() => {
        timers.delete(timer);
        stats.resyncs++;
        const missing = list.filter((t) => needsBook(t, since));
        if (missing.length === 0) return;
        opts.logger.info({ tokens: missing.length }, 'resyncing books over REST after a reconnect');
        for (const t of missing) pending.set(t, since);
        kick();
      }, delayMs);
      timers.add(timer);
    },
    refetch(tokenId) {
      if (closed || pending.has(tokenId)) return;
      pending.set(tokenId, opts.clock.now() + 1);
      kick();
    },
    stats: () => ({ waiting: timers.size, ...stats }),
    async close() {
      closed = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      pending.clear();
      abort.abort();
      await running;
    },
  };
}
