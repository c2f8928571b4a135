/**
 * Loaded into every node process of a soak run (`node --import …/probe.mjs`, through NODE_OPTIONS):
 * appends one JSON line of the process's memory, event-loop delay and open handles to
 * `$SOAK_PROBE_DIR/<pid>.jsonl` every SOAK_PROBE_MS. The simulator and the demo crowd have no
 * /metrics of their own; this reads the same numbers prom-client's default metrics report for the
 * services, so every process is measured alike. Plain JavaScript: it runs before any TypeScript loader.
 */
import { appendFileSync, writeFileSync } from 'node:fs';
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
