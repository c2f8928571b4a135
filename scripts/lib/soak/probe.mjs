/**
 * Loaded into every node process of a soak run (`node --import …/probe.mjs`, through NODE_OPTIONS):
 * appends one JSON line of the process's memory, event-loop delay and open handles to
 * `$SOAK_PROBE_DIR/<pid>.jsonl` every SOAK_PROBE_MS. The simulator and the demo crowd have no
 * /metrics of their own; this reads the same numbers prom-client's default metrics report for the
 * services, so every process is measured alike. Plain JavaScript: it runs before any TypeScript loader.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import v8 from 'node:v8';
import { isMainThread } from 'node:worker_threads';

// The main thread only: NODE_OPTIONS' --import runs in worker threads too (tsx starts one for
// esbuild in the crowd), whose lines would take the process's file under another name.
const dir = isMainThread ? process.env.SOAK_PROBE_DIR : undefined;
const every = Number(process.env.SOAK_PROBE_MS || 10_000);
if (dir && Number.isFinite(every) && every > 0) {
  const file = path.join(dir, `${process.pid}.jsonl`);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const argv = process.argv.slice(1).join(' ');
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    const heap = v8.getHeapStatistics();
    const line = {
      t: Date.now(),
      pid: process.pid,
      argv,
      rss: m.rss,
      heap_used: m.heapUsed,
      heap_total: m.heapTotal,
      heap_limit: heap.heap_size_limit,
      external: m.external,
      array_buffers: m.arrayBuffers,
      loop_p99_ms: delay.percentile(99) / 1e6,
      handles: process.getActiveResourcesInfo().filter((r) => r !== 'Timeout' && r !== 'Immediate').length,
      ...mappings(),
    };
    delay.reset();
    try {
      appendFileSync(file, `${JSON.stringify(line)}\n`);
    } catch {
      /* the soak's folder is gone: nothing to report to */
    }
  }, every);
  timer.unref();
}

/**
 * The resident memory by kind of mapping, from /proc/self/smaps (Linux; nothing elsewhere), so an RSS
 * that grows while the JS heap does not shows where it grows:
 * - malloc: the main arena (`[heap]`, grown by brk) and the other threads' arenas, which glibc maps
 *   64 MiB-aligned (a V8 page on such a boundary is counted here too; they are few);
 * - anon: the other anonymous mappings: V8's heap pages and code, malloc's large blocks, thread stacks;
 * - file: mapped files, node's own code and the libraries.
 */
const ARENA_ALIGN = 64n << 20n;
function mappings() {
  let text;
  try {
    text = readFileSync('/proc/self/smaps', 'utf8');
  } catch {
    return {};
  }
  const kb = { malloc: 0, anon: 0, file: 0 };
  let kind = null;
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const name = head[2];
      if (name === '[heap]') kind = 'malloc';
      else if (name.startsWith('/')) kind = 'file';
      else if (name === '' && BigInt(`0x${head[1]}`) % ARENA_ALIGN === 0n) kind = 'malloc';
      else kind = 'anon';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && kind) kb[kind] += Number(rss[1]);
  }
  return { rss_malloc: kb.malloc * 1024, rss_anon: kb.anon * 1024, rss_file: kb.file * 1024 };
}

// With SOAK_HEAP_PROFILE_MS set, the process also keeps V8's sampling heap profiler running from its
// start and writes what it holds every SOAK_HEAP_PROFILE_MS to `<pid>-<minutes>.heapprofile`: the
// sampled allocations still alive then, by the stack that made them. Two of them, one late in the
// warm-up and one at the end, show what a process keeps adding. The session is the process's own
// and stays open: V8 drops the samples when the session that started sampling closes.
const profileEvery = Number(process.env.SOAK_HEAP_PROFILE_MS || 0);
if (dir && Number.isFinite(profileEvery) && profileEvery > 0) {
  const session = new Session();
  session.connect();
  const started = Date.now();
  session.post('HeapProfiler.startSampling', { samplingInterval: 32_768 }, (err) => {
    if (err) return;
    const timer = setInterval(() => {
      session.post('HeapProfiler.getSamplingProfile', (error, result) => {
        if (error) return;
        const minutes = Math.round((Date.now() - started) / 60_000);
        try {
          writeFileSync(path.join(dir, `${process.pid}-${String(minutes).padStart(4, '0')}.heapprofile`), JSON.stringify(result.profile));
        } catch {
          /* the soak's folder is gone */
        }
      });
    }, profileEvery);
    timer.unref();
  });
}
