import type { Config } from '@pm/shared/config';
import type { Logger } from '@pm/shared/logger';
import type { SnapshotName } from '@pm/shared/redis';
import type { EndpointPath, ParamsOf, ResponseOf } from '@pm/shared/api';
import type { z } from 'zod';
import type { Cursors } from '../pages/cursor.js';
import type { PageReader } from '../pages/pages.js';
import type { CandleReader } from '../pages/candles.js';
import type { ReadQueryable } from '../pages/read-pool.js';
import type { HeldSnapshot } from '../snapshots/snapshot-store.js';
import type { OnDemandBuilds } from '../snapshots/on-demand.js';

/**
 * What every handler may use. Handlers never see Express, and never build a version or an ETag:
 * the adapter notes every snapshot a handler reads (and whether it asked for `live`) and derives the
 * response's cache identity from those and the parameters (adapter.ts).
 */
export interface HandlerContext {
  snapshots: { read<T>(name: SnapshotName, schema: z.ZodType<T>): Promise<HeldSnapshot<T> | null> };
  /** Whether prices count as live now (docs/design.md: feed connected, last message under 30 s old). */
  live(): boolean;
  /** Postgres, read-only: pages past the first of the lists, a person's record and calls, a call's page. A body read through it is never held as a ready response. */
  pages: PageReader;
  /** Postgres, read-only: candles from the history tiers. Like `pages`, a body read through it is never held. */
  candles: CandleReader;
  /** The read pool the page reader uses (pages/read-pool.ts): for another read-only path, so that it follows the replica and its fallback too. */
  readDb: ReadQueryable;
  /** Makes and checks `next_cursor` / `?cursor=`. */
  cursors: Cursors;
  /** The slug of the event holding a market, from the worker's market index; null when unknown. */
  marketEvent(marketId: string): Promise<string | null>;
  /**
   * An event's snapshot that is not in Redis (a closed event's, retired), built by the worker on
   * request when Postgres knows the event (snapshots/on-demand.ts). What it reads is not noted: read
   * the snapshot again through `snapshots` (routes/event-market.ts `eventPart` does).
   */
  onDemand: OnDemandBuilds;
  /** Unix ms. */
  clock: () => number;
  config: Config;
  logger: Logger;
}

export type HandlerResult<P extends EndpointPath> = (
  | {
      /** The success body without `ok` (the adapter adds `ok: true`). */
      data: Omit<ResponseOf<P>, 'ok'>;
    }
  | {
      /**
       * The whole success body (`{"ok":true,…}`) already written as JSON, for a body too large for
       * JSON.stringify's pace (routes/candles-body.ts, which its tests hold to the response schema).
       */
      json: Buffer;
    }
) & {
  /** The body can never change (a closed window of history): cached for a day, `immutable`. */
  immutable?: boolean;
};

/** A handler receives validated parameters and returns data; errors are thrown as ApiError. */
export type Handler<P extends EndpointPath> = (params: ParamsOf<P>, ctx: HandlerContext) => Promise<HandlerResult<P>>;

/** One handler per endpoint of the table: a missing one does not compile. */
export type HandlerMap = { readonly [P in EndpointPath]: Handler<P> };
