import { z } from 'zod';
import type { CatalogEvent } from './protocol.js';

/**
 * Gamma's `GET /events` over any catalog (synthetic or recorded): the filters the ingestor uses,
 * `order` + `ascending`, and `limit` (default 100, at most 500) / `offset` paging.
 */
const flag = z.enum(['true', 'false']).transform((v) => v === 'true');

const querySchema = z.object({
  limit: z.coerce.number().int().min(0).default(100).transform((n) => Math.min(n, 500)),
  offset: z.coerce.number().int().min(0).default(0),
  active: flag.optional(),
  closed: flag.optional(),
  live: flag.optional(),
  ascending: flag.default(false),
  order: z.string().optional(),
  tag_id: z.string().regex(/^\d+$/, 'must be a number').optional(),
  game_id: z.string().optional(),
  slug: z.array(z.string()),
  id: z.array(z.string()),
});

export type EventsQuery = z.infer<typeof querySchema>;

export function parseEventsQuery(params: URLSearchParams): { ok: true; query: EventsQuery } | { ok: false; error: string } {
  const single = (key: string) => params.get(key) ?? undefined;
  const list = (key: string) => params.getAll(key).flatMap((v) => v.split(',')).filter(Boolean);
  const result = querySchema.safeParse({
    limit: single('limit'),
    offset: single('offset'),
    active: single('active'),
    closed: single('closed'),
    live: single('live'),
    ascending: single('ascending'),
    order: single('order'),
    tag_id: single('tag_id'),
    game_id: single('game_id'),
    slug: list('slug'),
    id: list('id'),
  });
  if (!result.success) {
    return { ok: false, error: result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') };
  }
  return { ok: true, query: result.data };
}

const num = (v: unknown): number => {
  const n = typeof v === 'number' ? v : Number(v);
  return Number.isFinite(n) ? n : 0;
};
const time = (v: unknown): number => {
  if (typeof v !== 'string') return 0;
  const n = Date.parse(v.includes('T') ? v : v.replace(' ', 'T').replace(/\+00$/, 'Z'));
  return Number.isFinite(n) ? n : 0;
};

const SORT_KEYS: Record<string, (e: CatalogEvent) => number> = {
  volume24hr: (e) => num(e.volume24hr),
  volume: (e) => num(e.volume),
  liquidity: (e) => num(e.liquidity),
  startDate: (e) => time(e.startDate),
  endDate: (e) => time(e.endDate),
  id: (e) => num(e.id),
};

/**
 * The page a query asks for: `fieldsOf` gives each item's list fields (an event is its own), so a
 * source can filter and sort light records and render only the page (protocol.ts ListedEvent).
 */
export function queryEvents<T>(items: readonly T[], q: EventsQuery, fieldsOf: (item: T) => CatalogEvent): T[] {
  const matching = items.filter((item) => {
    const e = fieldsOf(item);
    if (q.active !== undefined && (e.active ?? true) !== q.active) return false;
    if (q.closed !== undefined && (e.closed ?? false) !== q.closed) return false;
    if (q.live !== undefined && (e.live ?? false) !== q.live) return false;
    if (q.tag_id !== undefined && !(e.tags ?? []).some((t) => String(t.id) === q.tag_id)) return false;
    if (q.game_id !== undefined && String(e.gameId ?? '') !== q.game_id) return false;
    if (q.slug.length && !q.slug.includes(String(e.slug ?? ''))) return false;
    if (q.id.length && !q.id.includes(String(e.id))) return false;
    return true;
  });
  const key = SORT_KEYS[q.order?.split(',')[0] ?? 'id'] ?? SORT_KEYS.id;
  const byId = SORT_KEYS.id;
  if (key && byId) {
    const dir = q.order ? (q.ascending ? 1 : -1) : 1;
    // Ties broken by id so that pages never overlap while nothing changes.
    matching.sort((a, b) => {
      const ea = fieldsOf(a);
      const eb = fieldsOf(b);
      return dir * (key(ea) - key(eb)) || byId(ea) - byId(eb);
    });
  }
  return matching.slice(q.offset, q.offset + q.limit);
}
