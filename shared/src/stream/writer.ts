import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { StreamMessage } from '../api/stream.js';
import { redisKeys } from '../redis/keys.js';
import { withDeadline } from '../wait.js';

/**
 * Appends the messages of `GET /api/v1/stream` to the one Redis Stream (`keys.stream`), for every
 * writer: the ingestor (price, score), the worker (settlement), the write path (call).
 *
 * - One entry per message: `t` topic, `e` event slug ('' when none), `m` market id ('' when none:
 *   a score), `d` the message's JSON, made
 *   once here so the API forwards bytes without parsing or re-serialising.
 * - Retention by time, not count: `XADD … MINID ~ <now − retention>` drops only whole nodes older than
 *   the window, so at least STREAM_RETENTION_MS (15 min; docs/design.md promises 10) stays resumable
 *   whatever the rate. One constant, not a setting: every XADD trims the whole stream, so writers in
 *   different processes must agree on it. The key's TTL (twice the window) removes a stream nobody writes any more (a test's prefix).
 * - Messages offered in one turn of the event loop go out as one pipeline, in order (at most
 *   `BATCH` a pipeline); one pipeline is in flight at a time and what arrives meanwhile waits for
 *   it, so entries are appended in the order they were offered.
 * - Best effort: the stream is a push channel over data that lives elsewhere (Redis chances, Postgres
 *   records), so a write that fails is logged and dropped, never retried out of order, and never fails
 *   the change it reports. A client then resumes past it; `/markets` and `/calls` still hold the truth.
 */

/** How long entries stay resumable (docs/design.md: at least 10 minutes). */
export const STREAM_RETENTION_MS = 15 * 60_000;
/**
 * Messages waiting to be written while Redis is slow or away; past this the oldest are dropped
 * (counted in the warning). Well above one turn's burst: the ingestor's first books at 5,000 open
 * events offer about 21,000 prices at once, and those must all be streamed.
 */
const MAX_PENDING = 100_000;
/** Messages a pipeline: a first-books burst goes out as a few pipelines rather than one of megabytes. */
const BATCH = 5_000;

export interface StreamWriter {
  /** Queue one message; it is appended within this turn of the event loop or right after the previous batch. */
  append(message: StreamMessage): void;
  /** Resolves when everything appended before the call was written (or dropped after a failure). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface StreamWriterOptions {
  redis: Redis;
  prefix: string;
  logger: Logger;
  /** Unix ms; injectable for tests. */
  clock?: () => number;
}

/**
 * One message, appended now (the write path, after its transaction committed: the call is in the
 * stream when recordCall returns). Never throws: a failure is logged (when a logger is given) and
 * the change it reports stands.
 */
/** How long a single append is waited for (a record's own message, after its commit). */
const APPEND_DEADLINE_MS = 2_000;

export async function appendStreamMessage(redis: Redis, prefix: string, message: StreamMessage, logger?: Logger): Promise<void> {
  const key = redisKeys(prefix).stream;
  try {
    // After the record's commit: a Redis that stops answering must not hold the caller's answer.
    await withDeadline(
      redis
        .multi()
        .xadd(key, 'MINID', '~', String(Date.now() - STREAM_RETENTION_MS), '*', 't', message.topic, 'e', slugOf(message), 'm', marketOf(message), 'd', JSON.stringify(message.data))
        .pexpire(key, STREAM_RETENTION_MS * 2)
        .exec(),
      APPEND_DEADLINE_MS,
      'appending to the event stream',
    );
  } catch (err) {
    logger?.warn({ err, topic: message.topic }, 'appending to the event stream failed; the message is not streamed');
  }
}

/** The event slug a message concerns ('' for a match no event is known for). */
function slugOf(message: StreamMessage): string {
  return message.data.event ?? '';
}

/** The market a message concerns ('' for a score, which concerns a match). */
function marketOf(message: StreamMessage): string {
  return 'market_id' in message.data ? message.data.market_id : '';
}

export function createStreamWriter(opts: StreamWriterOptions): StreamWriter {
  const key = redisKeys(opts.prefix).stream;
  const retentionMs = STREAM_RETENTION_MS;
  const clock = opts.clock ?? Date.now;
  const pending: StreamMessage[] = [];
  let dropped = 0;
  let scheduled = false;
  /** The pipeline being written, if any; `run` starts the next when it settles. */
  let writing: Promise<void> | undefined;
  let closed = false;
  /** Messages offered so far, and of those how many are done with: written, failed or dropped. */
  let offered = 0;
  let done = 0;

  async function write(batch: StreamMessage[]): Promise<void> {
    const pipe = opts.redis.pipeline();
    const minId = String(clock() - retentionMs);
    for (const m of batch) pipe.xadd(key, 'MINID', '~', minId, '*', 't', m.topic, 'e', slugOf(m), 'm', marketOf(m), 'd', JSON.stringify(m.data));
    pipe.pexpire(key, retentionMs * 2);
    try {
      const results = await pipe.exec();
      const failed = results?.find(([err]) => err);
      if (failed) throw failed[0];
    } catch (err) {
      opts.logger.warn({ err, messages: batch.length }, 'appending to the event stream failed; those messages are not streamed');
    }
  }

  function run(): void {
    scheduled = false;
    if (writing !== undefined || pending.length === 0) return;
    if (dropped > 0) {
      opts.logger.warn({ dropped }, 'event stream writes fell behind; the oldest messages were not streamed');
      dropped = 0;
    }
    const batch = pending.splice(0, BATCH);
    writing = write(batch).finally(() => {
      done += batch.length;
      writing = undefined;
      run();
    });
  }

  /** Resolves when every message offered before the call is done with. */
  async function flushed(): Promise<void> {
    const target = offered;
    run();
    while (done < target && writing !== undefined) {
      await writing;
      run();
    }
  }

  return {
    append(message) {
      if (closed) return;
      offered++;
      pending.push(message);
      // Dropped in chunks (a tenth of the bound at a time), not one shift per message past it.
      if (pending.length > MAX_PENDING + MAX_PENDING / 10) {
        const over = pending.length - MAX_PENDING;
        pending.splice(0, over);
        dropped += over;
        done += over;
      }
      if (!scheduled) {
        scheduled = true;
        // After the current batch of synchronous work (a frame's many book changes): one pipeline.
        setImmediate(run);
      }
    },
    flush: flushed,
    async close() {
      closed = true;
      await flushed();
    },
  };
}
