import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';
import { prettyFactory } from 'pino-pretty';
import { DEFAULT_RESTART_POLICY, NO_RESTARTS, onDeath, type RestartHistory, type RestartPolicy } from './restart-policy.js';

/**
 * Runs the services as child processes and prints their JSON logs as readable, service-prefixed
 * lines. A service that dies is started again after a growing, capped delay (restart-policy.ts) and
 * never given up on: one crash-looping service is reported — in its log lines and through `onChange`,
 * which the run line turns into its status line — while the others keep serving.
 */
export interface ServiceSpec {
  name: string;
  entry: string;
  env: NodeJS.ProcessEnv;
  /** Options for node itself, before the entry (V8's heap flags; a node:cluster worker inherits them). */
  nodeArgs?: readonly string[];
}

export interface ServiceStatus {
  name: string;
  /** `up`: running; `restarting`: dead, waiting for its next start; `stopped`: stopped by `stop()`. */
  state: 'up' | 'restarting' | 'stopped';
  pid: number | null;
  restarts: number;
  /** It died `loopAfter` or more times in a row within a minute of starting, and has not yet run a minute since. */
  crashLooping: boolean;
  /** Deaths in a row, each within a minute of its start. */
  quickDeaths: number;
  /** When `restarting`: the delay before the next start. */
  nextStartInMs: number | null;
}

/**
 * A built service (`.mjs`, scripts/lib/build.ts) runs as it is; a script through tsx. Not with
 * `--enable-source-maps`: on Node 24 it sends every `process.nextTick` through V8's slow path (an
 * API process spent 8.5% of its time there, 11 rather than 8 µs of CPU a request); set
 * NODE_OPTIONS=--enable-source-maps to have stack traces name the TypeScript while debugging.
 */
function loaderArgs(entry: string): string[] {
  return entry.endsWith('.ts') ? ['--import', 'tsx'] : [];
}

const COLORS = ['\x1b[36m', '\x1b[35m', '\x1b[33m', '\x1b[32m', '\x1b[34m'];

export function createSupervisor(opts: {
  cwd: string;
  pretty: boolean;
  out?: NodeJS.WritableStream;
  policy?: RestartPolicy;
  /** Called when a service dies, starts again, starts or stops crash-looping; gets every service's status. */
  onChange?: (changed: ServiceStatus, all: ServiceStatus[]) => void;
}) {
  const out = opts.out ?? process.stdout;
  const policy = opts.policy ?? DEFAULT_RESTART_POLICY;
  const colorize = opts.pretty && Boolean((out as NodeJS.WriteStream).isTTY);
  const pretty = prettyFactory({
    colorize,
    translateTime: 'HH:MM:ss.l',
    ignore: 'pid,hostname,service,name',
    singleLine: true,
  });
  const children = new Map<string, ChildProcess>();
  const statuses = new Map<string, ServiceStatus>();
  const histories = new Map<string, RestartHistory>();
  let stopping = false;
  let started = 0;

  const width = 12;
  function printer(name: string, index: number) {
    const tag = colorize ? `${COLORS[index % COLORS.length]}${name.padEnd(width)}\x1b[0m` : name.padEnd(width);
    return (line: string) => {
      if (!line.trim()) return;
      let text = line;
      if (opts.pretty && line.startsWith('{')) {
        try {
          text = pretty(JSON.parse(line)).trimEnd();
        } catch {
          /* not JSON after all: print as is */
        }
      }
      out.write(`${tag} ${text}\n`);
    };
  }

  function update(name: string, patch: Partial<ServiceStatus>) {
    const next = { ...statuses.get(name)!, ...patch };
    statuses.set(name, next);
    opts.onChange?.(next, [...statuses.values()]);
  }

  function start(spec: ServiceSpec, index: number) {
    const child = spawn(process.execPath, [...(spec.nodeArgs ?? []), ...loaderArgs(spec.entry), spec.entry], {
      cwd: opts.cwd,
      env: spec.env,
      // The IPC channel is how a service learns the run line is gone, however it died (ops/shutdown.ts).
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const startedAt = Date.now();
    children.set(spec.name, child);
    const print = printer(spec.name, index);
    readline.createInterface({ input: child.stdout! }).on('line', print);
    readline.createInterface({ input: child.stderr! }).on('line', print);
    update(spec.name, { state: 'up', pid: child.pid ?? null, nextStartInMs: null });
    // A crash-looping service that has now stayed up a whole minute is well again.
    const stable = setTimeout(() => {
      if (children.get(spec.name) !== child || !statuses.get(spec.name)?.crashLooping) return;
      print(`up for ${Math.round(policy.stableMs / 1000)} s after ${statuses.get(spec.name)!.restarts} restarts: no longer crash-looping`);
      update(spec.name, { crashLooping: false, quickDeaths: 0 });
    }, policy.stableMs);
    stable.unref();
    child.on('exit', (code, signal) => {
      clearTimeout(stable);
      children.delete(spec.name);
      if (stopping) {
        update(spec.name, { state: 'stopped', pid: null });
        return;
      }
      const ranMs = Date.now() - startedAt;
      const decision = onDeath(histories.get(spec.name) ?? NO_RESTARTS, ranMs, policy);
      histories.set(spec.name, decision.history);
      const after = `after ${(ranMs / 1000).toFixed(1)} s`;
      print(`exited (${signal ?? `code ${code}`}) ${after}; restart ${decision.history.restarts} in ${decision.delayMs} ms`);
      if (decision.crashLooping) {
        print(
          `CRASH-LOOPING: died ${decision.history.quickDeaths} times in a row within ${Math.round(policy.stableMs / 1000)} s of starting; ` +
            `restarting with backoff (next in ${decision.delayMs} ms, at most every ${Math.round(policy.capMs / 1000)} s) while the rest keeps running`,
        );
      }
      update(spec.name, {
        state: 'restarting',
        pid: null,
        restarts: decision.history.restarts,
        quickDeaths: decision.history.quickDeaths,
        crashLooping: decision.crashLooping,
        nextStartInMs: decision.delayMs,
      });
      setTimeout(() => !stopping && start(spec, index), decision.delayMs);
    });
  }

  return {
    /** Starts these services (may be called again to add more). */
    run(specs: ServiceSpec[]) {
      for (const spec of specs) {
        statuses.set(spec.name, { name: spec.name, state: 'up', pid: null, restarts: 0, crashLooping: false, quickDeaths: 0, nextStartInMs: null });
        start(spec, started++);
      }
    },
    /** Every service's status, in the order they were started. */
    status(): ServiceStatus[] {
      return [...statuses.values()];
    },
    /** SIGTERM the children that `which` selects (all by default), SIGKILL what is left after graceMs. */
    async stop(graceMs = 10_000, which: (name: string) => boolean = () => true) {
      stopping = true;
      const waits = [...children.entries()]
        .filter(([name]) => which(name))
        .map(
          ([, child]) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null) return resolve();
              child.once('exit', () => resolve());
              child.kill('SIGTERM');
              setTimeout(() => {
                child.kill('SIGKILL');
                resolve();
              }, graceMs).unref();
            }),
        );
      await Promise.all(waits);
    },
  };
}

/** One line saying how every service is, crash-looping ones first and loudly. */
export function describeStatus(all: ServiceStatus[]): string {
  const restarts = (n: number) => `${n} restart${n === 1 ? '' : 's'}`;
  const one = (s: ServiceStatus) => {
    if (s.crashLooping) {
      const next = s.state === 'restarting' && s.nextStartInMs !== null ? `, next start in ${Math.round(s.nextStartInMs / 100) / 10} s` : ', up again';
      return `${s.name} CRASH-LOOPING (${restarts(s.restarts)}${next})`;
    }
    if (s.state === 'restarting') return `${s.name} restarting (${restarts(s.restarts)})`;
    return s.restarts > 0 ? `${s.name} ${s.state} (${restarts(s.restarts)})` : `${s.name} ${s.state}`;
  };
  return [...all].sort((a, b) => Number(b.crashLooping) - Number(a.crashLooping)).map(one).join(' · ');
}
