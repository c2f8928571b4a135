/**
 * Reconnect delay: exponential from `initialMs`, capped at `maxMs`, with "equal jitter" (half
 * fixed, half random) so a fleet of sockets dropped together does not reconnect in lockstep.
 */
export function backoffDelay(attempt: number, initialMs: number, maxMs: number, random: () => number = Math.random): number {
  const base = Math.min(maxMs, initialMs * 2 ** Math.max(0, attempt));
  return Math.round(base / 2 + (random() * base) / 2);
}
