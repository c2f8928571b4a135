/**
 * npm run bench:api — drives /api/v1/markets and /api/v1/markets/{slug} on a running stack and, in
 * the same run, a bare node:http server returning the same bytes; prints requests/s, p50 and p99
 * latency for each, and the ratio to the bare server.
 *   BENCH_API_URL=http://host:port  use a stack that is already running (give it RATE_LIMIT_PER_MINUTE
 *                                   high enough, or most answers are 429s — the bench reports them)
 *   otherwise                       starts its own stack through the run line, rate limit raised
 *   BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 32)
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon, { type Result } from 'autocannon';
import { freePort, startStack, type Stack } from '../support/stack.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);

async function startBare(routes: Record<string, Buffer>): Promise<{ url: string; stop(): void }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'bare-server.ts')], { stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdin.end(JSON.stringify({ port, routes: Object.fromEntries(Object.entries(routes).map(([p, b]) => [p, b.toString('base64')])) }));
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`bare server exited ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill() };
}

function row(name: string, r: Result) {
  return {
    target: name,
    'req/s': Math.round(r.requests.average),
    'p50 ms': r.latency.p50,
    'p99 ms': r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
  };
}

async function main() {
  let stack: Stack | undefined;
  let apiUrl = process.env.BENCH_API_URL;
  if (!apiUrl) {
    process.stdout.write('starting the stack through the run line…\n');
    stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '100000000', LOG_LEVEL: 'warn' } });
    apiUrl = stack.apiUrl;
    await new Promise((r) => setTimeout(r, 3000)); // let the first snapshots settle
  }
  try {
    const list = (await (await fetch(`${apiUrl}/api/v1/markets`)).json()) as { events: Array<{ slug: string }> };
    const slug = list.events[0]?.slug;
    if (!slug) throw new Error('the API returned no events');
    const paths = ['/api/v1/markets', `/api/v1/markets/${slug}`];
    const bodies: Record<string, Buffer> = {};
    for (const p of paths) bodies[p] = Buffer.from(await (await fetch(`${apiUrl}${p}`)).arrayBuffer());
    const bare = await startBare(bodies);
    const rows = [];
    try {
      for (const p of paths) {
        // Warm both, then measure the API and the baseline back to back under the same load.
        await autocannon({ url: `${apiUrl}${p}`, connections, duration: 2 });
        const api = await autocannon({ url: `${apiUrl}${p}`, connections, duration: seconds });
        await autocannon({ url: `${bare.url}${p}`, connections, duration: 2 });
        const base = await autocannon({ url: `${bare.url}${p}`, connections, duration: seconds });
        rows.push(
          { ...row(`api ${p}`, api), bytes: bodies[p]!.length, 'vs bare': `${(api.requests.average / base.requests.average).toFixed(2)}x` },
          { ...row(`bare ${p}`, base), bytes: bodies[p]!.length, 'vs bare': '1.00x' },
        );
      }
    } finally {
      bare.stop();
    }
    process.stdout.write(`\nbench:api — ${connections} connections, ${seconds} s per target, node ${process.version}\n`);
    console.table(rows);
  } finally {
    await stack?.stop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
