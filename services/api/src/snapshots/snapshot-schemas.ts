import { z } from 'zod';
import type { SnapshotName } from '@pm/shared/redis';
import { HISTORY_RANGES, type BookSnapshot, type RankingSnapshot, type EventSnapshot, type HistorySnapshot, type LiveSnapshot, type MarketListSnapshot, type MarketSearchSnapshot } from '@pm/shared/snapshots';
import { categorySchema, eventCardSchema, eventSchema, historyPointSchema, leagueEntrySchema, liveMatchSchema } from '@pm/shared/api';

/**
 * Zod schemas of the snapshot payloads (shared/src/snapshots.ts), so a body written by the worker is
 * parsed at the boundary once per etag rather than trusted. Typed against the shared interfaces so
 * the two cannot drift apart silently.
 */

export const marketListSnapshotSchema: z.ZodType<MarketListSnapshot> = z.object({
  ranking: z.number().int().optional(),
  categories: z.array(categorySchema),
  leagues: z.array(leagueEntrySchema),
  events: z.array(eventCardSchema),
});

export const marketSearchSnapshotSchema: z.ZodType<MarketSearchSnapshot> = z.object({
  ranking: z.number().int().optional(),
  categories: z.array(categorySchema),
  leagues: z.array(leagueEntrySchema),
  entries: z.array(
    z.object({ text: z.string(), category: categorySchema, league: z.string().nullable(), card: eventCardSchema }),
  ),
});

export const eventSnapshotSchema: z.ZodType<EventSnapshot> = z.object({
  event: eventSchema,
  overlay: z.record(z.string(), z.object({ day_ago: z.number().nullable() })).optional(),
});

export const historySnapshotSchema: z.ZodType<HistorySnapshot> = z.object({
  market_id: z.string(),
  range: z.enum(HISTORY_RANGES),
  points: z.array(historyPointSchema),
});

export const rankingSnapshotSchema: z.ZodType<RankingSnapshot> = z.object({
  version: z.number().int(),
  events: z.array(z.tuple([z.string(), categorySchema, z.string().nullable()])),
});

const bookLevel = z.object({ price: z.number(), size: z.number() });
export const bookSnapshotSchema: z.ZodType<BookSnapshot> = z.object({
  market_id: z.string(),
  as_of: z.string(),
  outcomes: z.array(z.object({ index: z.number().int().min(0), bids: z.array(bookLevel), asks: z.array(bookLevel) })),
});

export const liveSnapshotSchema: z.ZodType<LiveSnapshot> = z.object({ matches: z.array(liveMatchSchema) });

/**
 * The ranking version a market list or the search list is cut from: its readers read it next (a first
 * page's cursor), so the store reads it with the list (snapshot-store.ts `companion`).
 */
export function listRanking(name: SnapshotName, data: unknown): { name: SnapshotName; schema: z.ZodType<unknown> } | undefined {
  if (!name.startsWith('markets:') || name.startsWith('markets:ranking:')) return undefined;
  const ranking = (data as { ranking?: unknown }).ranking;
  return typeof ranking === 'number' ? { name: `markets:ranking:${ranking}`, schema: rankingSnapshotSchema } : undefined;
}
