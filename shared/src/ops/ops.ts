import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Redis } from 'ioredis';
import type { Logger } from '../logger.js';
import type { ServiceMetrics, ServiceName } from '../metrics.js';

/**
 * The operations surface every service shares: `/metrics` (Prometheus text), `/healthz` (alive: 200
 * while the process runs) and `/readyz` (200 `{ok:true, checks}` when every dependency answers, else
 * 503 `{ok:false, checks}`). The ingestor and the worker serve it on their own port
 * (INGESTOR_PORT, WORKER_PORT) with `startOpsServer`; the API mounts `answerOps` on its public port.
 */

/** Resolves when the dependency is usable; throws (with a message a person can act on) when not. */
export type ReadinessCheck = () => Promise<void>;

export interface CheckResult {
  ok: boolean;
  ms: number;
  error?: string;
}

export interface ReadinessReport {
  ok: boolean;
  checks: Record<string, CheckResult>;
}

/** Runs every check at once, each bounded by `timeoutMs` (a hung dependency is a failed check, not a hung probe). */
export async function checkReadiness(checks: Record<string, ReadinessCheck>, timeoutMs = 2_000): Promise<ReadinessReport> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]): Promise<[string, CheckResult]> => {
      const started = Date.now();
      try {
        await withDeadline(check(), timeoutMs, `${name} did not answer within ${timeoutMs} ms`);
        return [name, { ok: true, ms: Date.now() - started }];
      } catch (err) {
        return [name, { ok: false, ms: Date.now() - started, error: err instanceof Error ? err.message : String(err) }];
      }
    }),
  );
  return { ok: entries.every(([, r]) => r.ok), checks: Object.fromEntries(entries) };
}

/** A dependency's own checks give up before the probe's overall deadline, so their words win. */
export const DEPENDENCY_DEADLINE_MS = 1_500;

export class DeadlineError extends Error {}

export async function withDeadline<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new DeadlineError(message)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Network failures a client reports by code, in words an operator reads at a glance. */
const CONNECTION_FAILURES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
};

/**
 * "<where> is not answering (<why>)" for a connection failure, "<where> answered with an error: <message>"
 * for anything the server itself said (a missing database, a server still loading): never a client's
 * raw error object or a stack.
 */
export function dependencyError(where: string, err: unknown): Error {
  const code = (err as { code?: unknown } | null)?.code;
  const failure = typeof code === 'string' ? CONNECTION_FAILURES[code] : undefined;
  if (failure) return new Error(`${where} is not answering (${failure})`);
  const message = err instanceof Error ? err.message : String(err);
  return new Error(message.startsWith(where) ? message : `${where} answered with an error: ${message}`);
}

/**
 * Redis answers PING. While the client is not connected the check says so at once, with the reason
 * of its last failed connection attempt, instead of queueing a PING that would wait for the reconnect.
 */
export function redisCheck(redis: Redis): ReadinessCheck {
  const { host, port, path } = redis.options;
  const where = path ? `Redis at ${path}` : `Redis at ${host ?? '127.0.0.1'}:${port ?? 6379}`;
  let lastFailure: unknown;
  redis.on('error', (err: unknown) => (lastFailure = err));
  redis.on('ready', () => (lastFailure = undefined));
  return async () => {
    if (redis.status !== 'ready') {
      if (lastFailure !== undefined) throw dependencyError(where, lastFailure);
      throw new Error(`${where} is not connected (${redis.status === 'end' ? 'connection closed' : redis.status})`);
    }
    let reply: string;
    try {
      reply = await withDeadline(redis.ping(), DEPENDENCY_DEADLINE_MS, `${where} is not answering (no reply within ${DEPENDENCY_DEADLINE_MS} ms)`);
    } catch (err) {
      throw dependencyError(where, err);
    }
    if (reply !== 'PONG') throw new Error(`${where} answered PING with ${reply}`);
  };
}

/** A flag the service raises once its start-up work is done (initial sync, first snapshot build). */
export function startedCheck(isStarted: () => boolean, what: string): ReadinessCheck {
  return async () => {
    if (!isStarted()) throw new Error(`${what} has not finished starting`);
  };
}

export interface OpsAnswer {
  status: number;
  contentType: string;
  body: string;
}

export const OPS_PATHS = ['/metrics', '/healthz', '/readyz'] as const;

/** The answer to an ops path, or null for any other path. */
export async function answerOps(
  path: string,
  opts: { metrics: ServiceMetrics<ServiceName>; readiness: Record<string, ReadinessCheck> },
): Promise<OpsAnswer | null> {
  const json = (status: number, value: unknown): OpsAnswer => ({ status, contentType: 'application/json; charset=utf-8', body: JSON.stringify(value) });
  switch (path) {
    case '/healthz':
      // The pid lets an operator (and the fault tests) signal this very process, whatever started it.
      return json(200, { ok: true, service: opts.metrics.service, pid: process.pid, uptime_s: Math.round(process.uptime()) });
    case '/readyz': {
      const report = await checkReadiness(opts.readiness);
      return json(report.ok ? 200 : 503, report);
    }
    case '/metrics': {
      const { contentType, body } = await opts.metrics.scrape();
      return { status: 200, contentType, body };
    }
    default:
      return null;
  }
}

export interface OpsServer {
  port: number;
  close(): Promise<void>;
}

/** A small node:http server answering the ops paths (GET/HEAD) and 404 for anything else. */
export function startOpsServer(opts: {
  host: string;
  port: number;
  metrics: ServiceMetrics<ServiceName>;
  readiness: Record<string, ReadinessCheck>;
  logger: Logger;
}): Promise<OpsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const send = (a: OpsAnswer) => {
      res.writeHead(a.status, { 'content-type': a.contentType, 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : a.body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send({ status: 405, contentType: 'text/plain', body: 'GET only\n' });
      return;
    }
    answerOps(path, opts).then(
      (answer) => send(answer ?? { status: 404, contentType: 'text/plain', body: `try ${OPS_PATHS.join(', ')}\n` }),
      (err: unknown) => {
        opts.logger.error({ err, path }, 'ops request failed');
        send({ status: 500, contentType: 'text/plain', body: 'internal error\n' });
      },
    );
  });
  // Probes and scrapes are short; a client that opens a socket and sends nothing must not pin it.
  server.requestTimeout = 10_000;
  server.keepAliveTimeout = 5_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      const { port } = server.address() as AddressInfo;
      opts.logger.info({ port }, 'ops server listening (/metrics, /healthz, /readyz)');
      resolve({
        port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
