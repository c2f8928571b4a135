import type { Redis } from 'ioredis';

/**
 * Every member of each set, and the sets emptied, in one MULTI: how a build takes the marks it
 * works on (a mark added meanwhile lands in the emptied set, for the next build). With `alongside`,
 * that string key's value is read in the same step (null when absent).
 */
export async function takeSets(redis: Redis, setKeys: readonly string[], alongside?: string): Promise<{ members: string[][]; value: string | null }> {
  const tx = redis.multi();
  for (const key of setKeys) tx.smembers(key);
  tx.del(...setKeys);
  if (alongside !== undefined) tx.get(alongside);
  const results = await tx.exec();
  if (results === null) throw new Error(`taking ${setKeys.join(', ')}: MULTI aborted`);
  for (const [err] of results) if (err) throw err;
  const members = setKeys.map((_, i) => {
    const v = results[i]?.[1];
    return Array.isArray(v) ? v.filter((m): m is string => typeof m === 'string') : [];
  });
  const raw = alongside === undefined ? undefined : results[setKeys.length + 1]?.[1];
  return { members, value: typeof raw === 'string' ? raw : null };
}
