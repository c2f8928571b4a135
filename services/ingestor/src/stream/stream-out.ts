import type { Redis } from 'ioredis';
import type { Quote } from '@pm/shared/domain';
import type { Logger } from '@pm/shared/logger';
import { createStreamWriter, priceMessage, scoreMessage, tradeMessage } from '@pm/shared/stream';
import { tradeId, type StoredTrade } from '@pm/shared/trades';
import type { Clock } from '../common/clock.js';
import type { GameRow } from '../sports/games-db.js';
import type { OutcomeDirectory } from '../catalog/outcome-directory.js';

/**
 * What the ingestor tells `GET /api/v1/stream` (shared/src/stream does the writing): a price message
 * for every displayed chance that moved, a score message for every match whose score or state changed,
 * a trade message for every print this ingestor added to the tape (after its commit).
 */
export interface IngestorStream {
  price(tokenId: string, chance: number, quote: Quote): void;
  scores(games: ReadonlyArray<GameRow & { event_slug: string | null }>): void;
  trades(trades: ReadonlyArray<{ tokenId: string; series: number; trade: StoredTrade }>): void;
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function createIngestorStream(opts: { redis: Redis; prefix: string; logger: Logger; clock: Clock; outcomes: OutcomeDirectory }): IngestorStream {
  const writer = createStreamWriter({ redis: opts.redis, prefix: opts.prefix, logger: opts.logger, clock: () => opts.clock.now() });
  return {
    price(tokenId, chance, quote) {
      const ref = opts.outcomes.get(tokenId);
      if (ref) writer.append(priceMessage(ref, chance, opts.clock.now(), quote));
    },
    scores(games) {
      for (const game of games) writer.append(scoreMessage(game, opts.clock.now()));
    },
    trades(trades) {
      for (const { tokenId, series, trade } of trades) {
        // A token no longer in the directory (its market closed an hour ago) has no event to name.
        const ref = opts.outcomes.get(tokenId);
        if (ref) writer.append(tradeMessage(ref, { id: tradeId({ series, atMs: trade.atMs, key: trade.key }), atMs: trade.atMs, px: trade.px, sz: trade.sz }));
      }
    },
    flush: () => writer.flush(),
    close: () => writer.close(),
  };
}
