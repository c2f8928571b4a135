import type { Redis } from 'ioredis';
import type { Quote } from '@pm/shared/domain';
import type { Logger } from '@pm/shared/logger';
import { createStreamWriter, priceMessage, scoreMessage } from '@pm/shared/stream';
import type { Clock } from '../common/clock.js';
import type { GameRow } from '../sports/games-db.js';
import type { OutcomeDirectory } from '../catalog/outcome-directory.js';

/**
 * What the ingestor tells `GET /api/v1/stream` (shared/src/stream does the writing): a price message
 * for every displayed chance that moved, a score message for every match whose score or state changed.
 */
export interface IngestorStream {
  price(tokenId: string, chance: number, quote: Quote): void;
  scores(games: ReadonlyArray<GameRow & { event_slug: string | null }>): void;
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
    flush: () => writer.flush(),
    close: () => writer.close(),
  };
}
