import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * CPU time of processes, from /proc/<pid>/stat: user plus system time of every thread of each
 * process (fields 14 and 15, in clock ticks), summed. What a server spends per request does not
 * depend on how fast the client asks, unlike its requests per second, so bench:api reports it next
 * to throughput (docs/benchmarks.md says why both).
 */

/** Clock ticks per second (`getconf CLK_TCK`; 100 on Linux). */
const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** Whether this machine has /proc (Linux): elsewhere the bench prints no CPU figures. */
export const CAN_READ_CPU = (() => {
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
})();

/** Seconds of CPU (user + system) the processes have used so far; a process gone since counts 0. */
export function cpuSeconds(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    // The command name (field 2) is in parentheses and may hold spaces: count fields after its end.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state): utime is field 14, stime field 15.
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / TICKS_PER_SECOND;
}

/** The CPU seconds and wall seconds `run` took for the processes `pids`, with its result. */
export function measured<T>(pids: readonly number[], run: () => T): { result: T; cpu: number; wall: number } {
  const cpuBefore = cpuSeconds(pids);
  const wallBefore = performance.now();
  const result = run();
  return { result, cpu: cpuSeconds(pids) - cpuBefore, wall: (performance.now() - wallBefore) / 1000 };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return sorted.length % 2 === 1 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
