import type { Config, Logger } from '@pm/shared';
import type { EndpointPath, ParamsOf, ResponseOf } from '@pm/shared/api';
import type { SnapshotStore } from './snapshot-store.js';

/** What every handler may use. Handlers never see Express. */
export interface HandlerContext {
  snapshots: SnapshotStore;
  /** Unix ms. */
  clock: () => number;
  config: Config;
  logger: Logger;
}

export interface HandlerResult<P extends EndpointPath> {
  /** The success body without `ok` (the adapter adds `ok: true`). */
  data: Omit<ResponseOf<P>, 'ok'>;
  /**
   * A string that changes exactly when `data` changes: the snapshot etag plus the request-time parts
   * (`live`, limit, search …). The ETag is derived from it, so a matching If-None-Match costs no
   * serialisation. Omitted for computed answers: the adapter then hashes the serialised body.
   */
  version?: string;
}

/** A handler receives validated parameters and returns data; errors are thrown as ApiError. */
export type Handler<P extends EndpointPath> = (params: ParamsOf<P>, ctx: HandlerContext) => Promise<HandlerResult<P>>;

/** One handler per endpoint of the table: a missing one does not compile. */
export type HandlerMap = { readonly [P in EndpointPath]: Handler<P> };
