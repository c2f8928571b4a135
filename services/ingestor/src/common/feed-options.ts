import type { Logger } from '@pm/shared/logger';

/** What both exchange channels' socket clients are given (market-feed.ts, sports-feed.ts). */
export interface FeedSocketOptions {
  /** The channel's full URL. */
  url: string;
  logger: Logger;
  /** Called when the channel as a whole goes up or down. */
  onConnectionChange?: (connected: boolean) => void;
  /** Recycle a socket that showed no life for this long (each channel has its own default). */
  silenceMs?: number;
  /** Reconnect backoff: from `reconnectInitialMs` (500 ms) doubling to `reconnectMaxMs` (10 s), jittered. */
  reconnectInitialMs?: number;
  reconnectMaxMs?: number;
}
