import type { Config } from '@pm/shared/config';
import type { Logger } from '@pm/shared/logger';
import type { SnapshotName } from '@pm/shared/redis';
import type { EndpointPath, ParamsOf, ResponseOf } from '@pm/shared/api';
import type { z } from 'zod';
import type { HeldSnapshot } from './snapshot-store.js';

/**
 * What every handler may use. Handlers never see Express, and never build a version or an ETag:
 * the adapter notes every snapshot a handler reads (and whether it asked for `live`) and derives the
 * response's cache identity from those and the parameters (adapter.ts).
 */
export interface HandlerContext {
  snapshots: { read<T>(name: SnapshotName, schema: z.ZodType<T>): Promise<HeldSnapshot<T> | null> };
  /** Whether prices count as live now (DESIGN.md: feed connected, last message under 30 s old). */
  live(): boolean;
  /** Unix ms. */
  clock: () => number;
  config: Config;
  logger: Logger;
}

export interface HandlerResult<P extends EndpointPath> {
  /** The success body without `ok` (the adapter adds `ok: true`). */
  data: Omit<ResponseOf<P>, 'ok'>;
}

/** A handler receives validated parameters and returns data; errors are thrown as ApiError. */
export type Handler<P extends EndpointPath> = (params: ParamsOf<P>, ctx: HandlerContext) => Promise<HandlerResult<P>>;

/** One handler per endpoint of the table: a missing one does not compile. */
export type HandlerMap = { readonly [P in EndpointPath]: Handler<P> };
