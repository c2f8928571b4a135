import type { Redis } from 'ioredis';
import { createServiceMetrics, setTotal, type ServiceMetrics } from '@pm/shared/metrics';
import { redisKeys } from '@pm/shared/redis';
import type { IngestorStats } from './ingestor.js';

/**
 * The ingestor's metrics. Nothing here runs on the feed's hot path: the counters the ingestor keeps
 * anyway (`stats()`) are copied into the registry when Prometheus scrapes, and feed freshness is read
 * from the same Redis hash the API uses to say whether prices are live.
 */

const CHANNELS = ['market', 'sports'] as const;

export function createIngestorMetrics(opts: {
  stats: () => IngestorStats;
  redis: Redis;
  prefix: string;
  now?: () => number;
}): ServiceMetrics<'ingestor'> {
  const metrics = createServiceMetrics('ingestor');
  const m = metrics.metric;
  const now = opts.now ?? Date.now;
  const feedKey = redisKeys(opts.prefix).feed;

  metrics.beforeScrape('ingestor_stats', () => {
    const s = opts.stats();
    const market = s.market;
    setTotal(m.wsFrames, { channel: 'market' }, market.frames);
    setTotal(m.wsFrames, { channel: 'sports' }, s.sports.frames);
    for (const [type, count] of Object.entries(market.messages)) setTotal(m.wsMessages, { channel: 'market', type }, count);
    setTotal(m.wsMessages, { channel: 'market', type: 'text' }, market.textFrames);
    setTotal(m.wsMessages, { channel: 'market', type: 'unknown' }, market.unknown);
    setTotal(m.wsMessages, { channel: 'sports', type: 'update' }, s.sports.updates);
    setTotal(m.wsMalformed, { channel: 'market' }, market.malformed);
    setTotal(m.wsMalformed, { channel: 'sports' }, s.sports.malformed);
    setTotal(m.wsReconnects, { channel: 'market' }, market.sockets.reconnects);
    setTotal(m.wsReconnects, { channel: 'sports' }, s.sports.reconnects);
    m.wsOpenSockets.set({ channel: 'market' }, market.sockets.open);
    m.booksHeld.set(market.books);
    m.subscribedTokens.set(market.sockets.subscribed);
    setTotal(m.chancesPublished, {}, s.chances.published);
    setTotal(m.tradePrints, { outcome: 'recorded' }, s.trades.recorded);
    setTotal(m.tradePrints, { outcome: 'repeated' }, s.trades.repeated);
    setTotal(m.tradePrints, { outcome: 'malformed' }, market.malformedTrades);
    setTotal(m.tradePrints, { outcome: 'dropped' }, s.trades.dropped);
    m.tradesPending.set(s.trades.pending);
    setTotal(m.catalogSyncs, { outcome: 'ok' }, s.catalog.syncs);
    setTotal(m.catalogSyncs, { outcome: 'failed' }, s.catalog.failures);
    if (s.catalog.last) m.catalogSyncDuration.set(s.catalog.last.durationMs / 1000);
  });

  metrics.beforeScrape('feed_health', async () => {
    const fields = CHANNELS.flatMap((c) => [`${c}_connected`, `${c}_last_at`]);
    const values = await opts.redis.hmget(feedKey, ...fields);
    CHANNELS.forEach((channel, i) => {
      const connected = values[i * 2] === '1';
      const lastAt = Number(values[i * 2 + 1]);
      m.feedConnected.set({ channel }, connected ? 1 : 0);
      // The sports socket is one connection: its open count is its connected flag.
      if (channel === 'sports') m.wsOpenSockets.set({ channel }, connected ? 1 : 0);
      if (values[i * 2 + 1] != null && Number.isFinite(lastAt)) m.feedAge.set({ channel }, Math.max(0, (now() - lastAt) / 1000));
      else m.feedAge.remove({ channel });
    });
  });

  return metrics;
}
