import { describe, expect, it } from 'vitest';
import { until } from '@pm/shared/wait';
import { createCoalescedWrite } from './coalesced-write.js';

/** A write whose round trips the test ends by hand, recording what each one carried. */
function harness() {
  let pending: number[] = [];
  const writes: number[][] = [];
  const ends: Array<(ok: boolean) => void> = [];
  const errors: unknown[] = [];
  const writer = createCoalescedWrite({
    write: () => {
      const batch = pending;
      pending = [];
      writes.push(batch);
      return new Promise<void>((resolve, reject) =>
        ends.push((ok) => {
          if (ok) resolve();
          else {
            pending = [...batch, ...pending];
            reject(new Error('down'));
          }
        }),
      );
    },
    onError: (err) => errors.push(err),
    retryMs: 1,
  });
  return {
    writer,
    writes,
    errors,
    change(n: number) {
      pending.push(n);
      writer.request();
    },
    /** End the oldest write still in flight. */
    end(ok = true) {
      const end = ends.shift();
      if (end === undefined) throw new Error('no write in flight');
      end(ok);
    },
  };
}

const turn = () => new Promise((r) => setImmediate(r));


describe('a coalesced write', () => {
  it('given a quiet writer, when a change comes, then it is written on the next turn of the loop with the changes of this turn', async () => {
    const h = harness();
    h.change(1);
    h.change(2);
    expect(h.writes).toEqual([]);
    await turn();
    expect(h.writes).toEqual([[1, 2]]);
  });

  it('given a write in flight, when changes come, then they are written as soon as it returns, in one write, without another change', async () => {
    const h = harness();
    h.change(1);
    await turn();
    h.change(2);
    h.change(3);
    await turn();
    expect(h.writes).toEqual([[1]]);
    h.end();
    await turn();
    await turn();
    expect(h.writes).toEqual([[1], [2, 3]]);
    h.end();
    await turn();
    await turn();
    expect(h.writes).toHaveLength(2);
  });

  it('given a failed write, then it is retried and flush says it was not written', async () => {
    const h = harness();
    h.change(1);
    await turn();
    const flushed = h.writer.flush();
    h.end(false);
    expect(await flushed).toBe(false);
    expect(h.errors).toHaveLength(1);
    await until('the retry', async () => h.writes.length === 2, { timeoutMs: 2_000, everyMs: 1 });
    expect(h.writes).toEqual([[1], [1]]);
    const again = h.writer.flush();
    h.end(true);
    expect(await again).toBe(true);
  });

  it('flush waits for the write in flight and writes what came after it at once', async () => {
    const h = harness();
    h.change(1);
    await turn();
    h.change(2);
    const flushed = h.writer.flush();
    h.end();
    await turn();
    expect(h.writes).toEqual([[1], [2]]);
    h.end();
    expect(await flushed).toBe(true);
  });
});
