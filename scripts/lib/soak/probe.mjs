/**
 * Loaded into every node process of a soak run (`node --import …/probe.mjs`, through NODE_OPTIONS):
 * appends one JSON line of the process's memory, event-loop delay and open handles to
 * `$SOAK_PROBE_DIR/<pid>.jsonl` every SOAK_PROBE_MS. The simulator and the demo crowd have no
 * /metrics of their own; this reads the same numbers prom-client's default metrics report for the
 * services, so every process is measured alike. Plain JavaScript: it runs before any TypeScript loader.
 */
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import v8 from 'node:v8';

const dir = process.env.SOAK_PROBE_DIR;
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
