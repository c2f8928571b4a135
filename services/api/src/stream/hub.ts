import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { Redis } from 'ioredis';
import type { Logger } from '@pm/shared/logger';
import { duplicateRedis, redisKeys } from '@pm/shared/redis';
import type { ResetMessage, StreamParams } from '@pm/shared/api';
import { compareStreamIds, toStreamEntry, type StreamEntry } from '@pm/shared/stream';

/**
 * The fan-out of `GET /api/v1/stream` in one API process (docs/design.md "Streams"): ONE reader per
 * process — an `XREAD BLOCK` loop on a dedicated connection — turns each entry into its SSE frame
 * once and writes it to every client whose filters match. No client costs a Redis connection; a
 * resuming client costs a few XRANGE pages on the shared connection, once.
 *
 * Resume without a gap: a client is attached first, collecting live entries (those after the hub's
 * cursor C at that instant) in `pending`, then the stored entries in (last id, C] are sent, then
 * `pending`, skipping anything not after what was sent — every entry is either stored by then or
 * read by the hub later, so none is missed and none is sent twice. A last id that is not in the
 * stream any more (trimmed past the retention window, or from another stream) cannot promise that,
 * and gets `event: reset` instead, then live entries.
 *
 * Slow clients: a client whose socket holds more than `maxBufferBytes` unsent (or that falls more
 * than `maxPending` entries behind while catching up) is cut; EventSource reconnects with its last
 * id and resumes. Heartbeats are one timer for the whole process.
 */

export interface StreamHubOptions {
  /** The API's connection, for one-off reads (resume); the hub duplicates it for its blocking reader. */
  redis: Redis;
  prefix: string;
  logger: Logger;
  heartbeatMs: number;
  maxBufferBytes: number;
  retentionSeconds: number;
  /** How long one XREAD blocks (default 5 s): only bounds how fast close() returns. */
  blockMs?: number;
  /** Most entries a catching-up client may have waiting (default 20,000). */
  maxPending?: number;
}

export interface StreamHub {
  /** Serves one stream on `res` (headers already checked by the route) until the client or the hub closes it. */
  open(res: ServerResponse, params: StreamParams): Promise<void>;
  /** Open streams in this process. */
  size(): number;
  /**
   * `listener` hears every batch of entries the reader reads (the live-price overlay), from now on:
   * starts the reader without waiting for a first stream.
   */
  watch(listener: (entries: readonly StreamEntry[]) => void): void;
  /** Stops the reader and ends every stream (graceful shutdown: clients reconnect elsewhere with their last id). */
  close(): Promise<void>;
}

interface Framed {
  entry: StreamEntry;
  /** The whole SSE message, made once for every client. */
  frame: string;
}

interface Client {
  res: ServerResponse;
  params: StreamParams;
  /** Clients with equal filters receive the same bytes: one key per filter, to encode each batch once per filter. */
  filterKey: string;
  /** Entries read while the client catches up; undefined once live. */
  pending: Framed[] | undefined;
}

const READ_COUNT = 1_000;
const PAGE = 500;

function frameOf(entry: StreamEntry): string {
  return `id: ${entry.id}\nevent: ${entry.topic}\ndata: ${entry.data}\n\n`;
}

/** Topic, then place: with neither filter every message; with one or both, one that matches either. */
function matches(params: StreamParams, entry: StreamEntry): boolean {
  if (!(params.topics as ReadonlySet<string>).has(entry.topic)) return false;
  const { events, markets } = params;
  if (events === undefined && markets === undefined) return true;
  return (events?.has(entry.event) ?? false) || (entry.market !== '' && (markets?.has(entry.market) ?? false));
}

export function createStreamHub(opts: StreamHubOptions): StreamHub {
  const { redis, logger } = opts;
  const key = redisKeys(opts.prefix).stream;
  const blockMs = opts.blockMs ?? 5_000;
  const maxPending = opts.maxPending ?? 20_000;
  const clients = new Set<Client>();
  const watchers: Array<(entries: readonly StreamEntry[]) => void> = [];
  let reader: Redis | undefined;
  let cursor = '0-0';
  let started: Promise<void> | undefined;
  let closed = false;
  let heartbeat: NodeJS.Timeout | undefined;
  let lastErrorAt = 0;

  const cut = (client: Client, why: string) => {
    logger.info({ why }, 'stream client cut');
    clients.delete(client);
    client.res.destroy();
  };

  /**
   * Writes `text`, unless what was written before is still unsent past the bound: then the client
   * is cut (checked before the write, so one large batch to a client that keeps up is never a cut).
   * False when cut or closed.
   */
  const send = (client: Client, text: string | Buffer): boolean => {
    const { res } = client;
    if (res.destroyed) return false;
    if (res.writableLength > opts.maxBufferBytes) {
      cut(client, 'socket buffer over the bound: the client does not read');
      return false;
    }
    res.write(text);
    return true;
  };

  /**
   * The fan-out's write: one HTTP chunk made once per batch and filter, written straight to each
   * client's socket — one write call per client instead of res.write's three (size line, data, CRLF)
   * and its per-write encoding; at 2,000 clients that is most of the process's work per message.
   * Only for a chunked response whose headers went out and that holds nothing unsent of its own
   * (its writableLength is its socket's: every open stream, in practice); anything else via send(),
   * so nothing can overtake bytes the response still holds.
   */
  const sendChunk = (client: Client, chunk: Buffer, payload: Buffer): boolean => {
    const { res } = client;
    const socket = res.socket;
    const direct = socket && res.headersSent && (res as ServerResponse & { chunkedEncoding?: boolean }).chunkedEncoding && res.writableLength === socket.writableLength;
    if (!direct) return send(client, payload);
    if (res.destroyed || socket.destroyed) return false;
    if (socket.writableLength > opts.maxBufferBytes) {
      cut(client, 'socket buffer over the bound: the client does not read');
      return false;
    }
    socket.write(chunk);
    return true;
  };

  const deliver = (batch: Framed[]) => {
    // The bytes of a batch per filter, encoded once: 2,000 clients on one filter cost one encoding
    // and 2,000 socket writes of the same Buffer (null: nothing in the batch passes that filter).
    const encoded = new Map<string, { chunk: Buffer; payload: Buffer } | null>();
    for (const client of clients) {
      if (client.pending) {
        client.pending.push(...batch);
        if (client.pending.length > maxPending) cut(client, 'too far behind while catching up');
        continue;
      }
      let bytes = encoded.get(client.filterKey);
      if (bytes === undefined) {
        let out = '';
        for (const f of batch) if (matches(client.params, f.entry)) out += f.frame;
        const payload = Buffer.from(out);
        bytes = out === '' ? null : { payload, chunk: Buffer.concat([Buffer.from(`${payload.length.toString(16)}\r\n`), payload, Buffer.from('\r\n')]) };
        encoded.set(client.filterKey, bytes);
      }
      if (bytes !== null) sendChunk(client, bytes.chunk, bytes.payload);
    }
  };

  async function readLoop(r: Redis): Promise<void> {
    while (!closed) {
      try {
        const reply = await r.xread('COUNT', READ_COUNT, 'BLOCK', blockMs, 'STREAMS', key, cursor);
        const items = reply?.[0]?.[1];
        if (!items || items.length === 0) continue;
        const entries = items.map(([id, fields]) => toStreamEntry(id, fields));
        cursor = entries[entries.length - 1]!.id;
        // Frames are made only for streams open now: with none, a burst costs no SSE text at all.
        if (clients.size > 0) deliver(entries.map((entry) => ({ entry, frame: frameOf(entry) })));
        if (watchers.length > 0) {
          for (const watcher of watchers) {
            try {
              watcher(entries);
            } catch (err) {
              logger.error({ err }, 'stream watcher failed');
            }
          }
        }
      } catch (err) {
        if (closed) return;
        if (Date.now() - lastErrorAt > 5_000) logger.warn({ err }, 'stream reader failed; retrying');
        lastErrorAt = Date.now();
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }

  /** The reader starts with the first stream: its cursor is the stream's newest id then. */
  function start(): Promise<void> {
    started ??= (async () => {
      // Its own connection: a blocked XREAD would hold up every other command on a shared one.
      const r = duplicateRedis(redis, { enableOfflineQueue: true, maxRetriesPerRequest: null, commandTimeout: blockMs + 5_000, enableAutoPipelining: false });
      r.on('error', () => {
        /* reported by the loop */
      });
      reader = r;
      for (;;) {
        try {
          const newest = await r.xrevrange(key, '+', '-', 'COUNT', 1);
          cursor = newest[0]?.[0] ?? '0-0';
          break;
        } catch (err) {
          if (closed) return;
          // The reader starts with the process now (the live-price overlay): one line per 5 s while Redis is away.
          if (Date.now() - lastErrorAt > 5_000) logger.warn({ err }, 'stream reader could not start; retrying');
          lastErrorAt = Date.now();
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      }
      void readLoop(r);
      heartbeat = setInterval(() => {
        for (const client of clients) send(client, ': heartbeat\n\n');
      }, opts.heartbeatMs);
    })();
    return started;
  }

  /** Sends what was stored after `lastId` up to `until` (inclusive), paced by the socket. Returns the last id sent past. */
  async function catchUp(client: Client, lastId: string, until: string): Promise<string> {
    let last = lastId;
    while (compareStreamIds(last, until) < 0) {
      const page = await redis.xrange(key, `(${last}`, until, 'COUNT', PAGE);
      if (page.length === 0) break;
      let out = '';
      for (const [id, fields] of page) {
        const entry = toStreamEntry(id, fields);
        if (matches(client.params, entry)) out += frameOf(entry);
        last = id;
      }
      if (out !== '' && !client.res.write(out)) {
        // Catching up is the one time we write faster than live: wait for the socket, don't cut it.
        await Promise.race([once(client.res, 'drain'), once(client.res, 'close')]);
      }
      if (client.res.destroyed) break;
      if (page.length < PAGE) break;
    }
    return last;
  }

  function reset(client: Client, from: string): void {
    const data: ResetMessage = {
      reason: 'unknown_id',
      message: 'the id to resume from is older than the retention window or not from this stream: messages were missed; re-read what you hold, live messages follow',
      retention_seconds: opts.retentionSeconds,
    };
    send(client, `${from === '0-0' ? '' : `id: ${from}\n`}event: reset\ndata: ${JSON.stringify(data)}\n\n`);
  }

  return {
    async open(res, params) {
      await start();
      if (closed) {
        res.end();
        return;
      }
      const list = (set: ReadonlySet<string> | undefined) => (set === undefined ? '*' : [...set].sort().join(','));
      const filterKey = `${list(params.topics)}|${list(params.events)}|${list(params.markets)}`;
      const client: Client = { res, params, filterKey, pending: params.lastEventId === undefined ? undefined : [] };
      // Attached before anything is read: from here on the hub collects what it reads after `from`.
      const from = cursor;
      clients.add(client);
      res.once('close', () => clients.delete(client));
      res.write(': stream open\nretry: 1000\n\n');
      const lastId = params.lastEventId;
      if (lastId === undefined) return;
      try {
        const known = (await redis.xrange(key, lastId, lastId)).length > 0;
        let sent = lastId;
        if (!known) {
          reset(client, from);
          sent = from;
        } else {
          sent = await catchUp(client, lastId, from);
        }
        const pending = client.pending ?? [];
        client.pending = undefined;
        let out = '';
        for (const f of pending) if (compareStreamIds(f.entry.id, sent) > 0 && matches(params, f.entry)) out += f.frame;
        if (out !== '') send(client, out);
      } catch (err) {
        logger.warn({ err }, 'resuming a stream failed; closing it so the client retries');
        clients.delete(client);
        res.destroy();
      }
    },
    size: () => clients.size,
    watch(listener) {
      watchers.push(listener);
      start().catch((err: unknown) => logger.warn({ err }, 'stream reader could not start'));
    },
    async close() {
      closed = true;
      if (heartbeat) clearInterval(heartbeat);
      for (const client of clients) client.res.end(': server closing; reconnect with your last id\n\n');
      clients.clear();
      reader?.disconnect();
    },
  };
}
