import { z } from 'zod';
import type { EventSnapshot, MarketListSnapshot, MarketSearchSnapshot } from '@pm/shared';
import { categorySchema, eventCardSchema, eventSchema, leagueEntrySchema } from '@pm/shared/api';

/**
 * Zod schemas of the snapshot payloads (shared/src/snapshots.ts), so a body written by the worker is
 * parsed at the boundary once per etag rather than trusted. Typed against the shared interfaces so
 * the two cannot drift apart silently.
 */

export const marketListSnapshotSchema: z.ZodType<MarketListSnapshot> = z.object({
  categories: z.array(categorySchema),
  leagues: z.array(leagueEntrySchema),
  events: z.array(eventCardSchema),
});

export const marketSearchSnapshotSchema: z.ZodType<MarketSearchSnapshot> = z.object({
  categories: z.array(categorySchema),
  leagues: z.array(leagueEntrySchema),
  entries: z.array(
    z.object({ text: z.string(), category: categorySchema, league: z.string().nullable(), card: eventCardSchema }),
  ),
});

export const eventSnapshotSchema: z.ZodType<EventSnapshot> = z.object({ event: eventSchema });
