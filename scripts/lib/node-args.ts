/**
 * V8 options of every process the run line starts, one list per service, on node's command line (a
 * node:cluster worker inherits them). The Dockerfile and docker-compose.yml start each service with
 * the same; test/infra/compose.unit.test.ts holds them equal. `npm run soak` measures what they do.
 *
 * - API: see API_NODE_ARGS (api-node-args.ts): young generation capped at 4 MB a semi-space, the
 *   first old-generation limit at 32 MB, later limits 1.5 times what the last full collection kept.
 * - ingestor, worker, simulator, crowd: the same three, for the same reason. Each had none, and V8's
 *   defaults let the young generation grow to 64 MB a semi-space under load and each later
 *   old-generation limit up to 4 times the live heap: a soak with a busy crowd (npm run soak, 12 min,
 *   100 reads/s) ended with JS heaps of 68 (ingestor), 171 (worker) and 164 MB (crowd) around 31, 66
 *   and 68 MB in use, and the pages V8 had taken stayed in the RSS (243, 239 and 223 MB). What a
 *   frame, a build or a write allocates dies within it, so a small young generation promotes little;
 *   the limits are soft, so a start that needs more (the ingestor's history backfill, the worker's
 *   first full build) still gets it.
 */
import { API_NODE_ARGS } from './api-node-args.js';

export type NodeService = 'api' | 'ingestor' | 'worker' | 'exchange-sim' | 'crowd';

const SMALL_HEAP: readonly string[] = ['--max-semi-space-size=4', '--initial-old-space-size=32', '--heap-growing-percent=50'];

export const NODE_ARGS: Readonly<Record<NodeService, readonly string[]>> = {
  api: API_NODE_ARGS,
  ingestor: SMALL_HEAP,
  worker: SMALL_HEAP,
  'exchange-sim': SMALL_HEAP,
  crowd: SMALL_HEAP,
};
