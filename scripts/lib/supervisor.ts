import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';
import { prettyFactory } from 'pino-pretty';

/**
 * Runs the services as child processes, restarts one that dies (with backoff, at most 5 times a
 * minute) and prints their JSON logs as readable, service-prefixed lines.
 */
export interface ServiceSpec {
  name: string;
  entry: string;
  env: NodeJS.ProcessEnv;
}

const COLORS = ['\x1b[36m', '\x1b[35m', '\x1b[33m', '\x1b[32m', '\x1b[34m'];

export function createSupervisor(opts: { cwd: string; pretty: boolean; out?: NodeJS.WritableStream }) {
  const out = opts.out ?? process.stdout;
  const colorize = opts.pretty && Boolean((out as NodeJS.WriteStream).isTTY);
  const pretty = prettyFactory({
    colorize,
    translateTime: 'HH:MM:ss.l',
    ignore: 'pid,hostname,service,name',
    singleLine: true,
  });
  const children = new Map<string, ChildProcess>();
  const restarts = new Map<string, number[]>();
  let stopping = false;
  let started = 0;
  let onFatal: (name: string) => void = () => {};

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

  function start(spec: ServiceSpec, index: number) {
    const child = spawn(process.execPath, ['--import', 'tsx', spec.entry], {
      cwd: opts.cwd,
      env: spec.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.set(spec.name, child);
    const print = printer(spec.name, index);
    readline.createInterface({ input: child.stdout! }).on('line', print);
    readline.createInterface({ input: child.stderr! }).on('line', print);
    child.on('exit', (code, signal) => {
      children.delete(spec.name);
      if (stopping) return;
      print(`exited (${signal ?? `code ${code}`})`);
      const now = Date.now();
      const recent = (restarts.get(spec.name) ?? []).filter((t) => now - t < 60_000);
      if (recent.length >= 5) {
        print('restarted 5 times within a minute; giving up');
        onFatal(spec.name);
        return;
      }
      recent.push(now);
      restarts.set(spec.name, recent);
      const delay = 500 * 2 ** (recent.length - 1);
      print(`restarting in ${delay} ms`);
      setTimeout(() => !stopping && start(spec, index), delay);
    });
  }

  return {
    /** Starts these services (may be called again to add more). */
    run(specs: ServiceSpec[], fatal: (name: string) => void) {
      onFatal = fatal;
      for (const spec of specs) start(spec, started++);
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
