/**
 * Fields per HMGET or HSET when a service reads or writes many fields of one hash. Redis runs one
 * command at a time, so one command over 5,000–20,000 fields (every open event's chances, every
 * token's `chanceAt`) held it for 3–12 ms, and every other client waited: the API's rate-limit
 * counts, which every cached read waits for, among them. A few hundred fields take well
 * under a millisecond; sent in one pipeline they still cost one round trip, and Redis serves other
 * clients between them.
 */
export const REDIS_FIELDS_PER_COMMAND = 500;

/** `items` in slices of `size` (the last one shorter). */
export function slices<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
