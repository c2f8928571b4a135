/**
 * The operations surface every service shares (`@pm/shared/ops`): readiness checks, the ops HTTP
 * server (/metrics, /healthz, /readyz) and graceful shutdown. Free of pg and BullMQ, so the API may
 * load it; the Postgres check lives with the connection layer (`@pm/shared/db`).
 */
export {
  checkReadiness,
  redisCheck,
  startedCheck,
  answerOps,
  startOpsServer,
  OPS_PATHS,
  type ReadinessCheck,
  type CheckResult,
  type ReadinessReport,
  type OpsAnswer,
  type OpsServer,
} from './ops.js';
export { onShutdown, SHUTDOWN_DEADLINE_MS } from './shutdown.js';
export { runService, type Service } from './service.js';
