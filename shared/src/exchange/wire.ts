/**
 * The market channel's messages as the exchange sends them (docs/protocol.md §1): snake_case, prices,
 * sizes and timestamps as strings. The simulator emits exactly these; the ingestor reads them with
 * the lenient parser (market-ws.ts), whose message union is keyed by this one's `event_type`, so a
 * message added here does not compile until it is read there.
 */

export interface BookLevel {
  price: string;
  size: string;
}

export interface BookMessage {
  event_type: 'book';
  asset_id: string;
  market: string;
  bids: BookLevel[];
  asks: BookLevel[];
  timestamp: string;
  hash: string;
  tick_size?: string;
  last_trade_price?: string;
}

export interface PriceChangeEntry {
  asset_id: string;
  price: string;
  size: string;
  side: 'BUY' | 'SELL';
  hash: string;
  best_bid: string;
  best_ask: string;
}

export interface PriceChangeMessage {
  event_type: 'price_change';
  market: string;
  timestamp: string;
  price_changes: PriceChangeEntry[];
}

export interface LastTradeMessage {
  event_type: 'last_trade_price';
  asset_id: string;
  market: string;
  price: string;
  size: string;
  side: 'BUY' | 'SELL';
  /** May be absent. */
  fee_rate_bps?: string;
  timestamp: string;
  /** The match's on-chain transaction (0x + 64 hex); current frames carry it, older ones do not. */
  transaction_hash?: string;
}

export interface TickSizeChangeMessage {
  event_type: 'tick_size_change';
  asset_id: string;
  market: string;
  old_tick_size: string;
  new_tick_size: string;
  timestamp: string;
}

export interface BestBidAskMessage {
  event_type: 'best_bid_ask';
  asset_id: string;
  market: string;
  best_bid: string;
  best_ask: string;
  spread: string;
  timestamp: string;
}

export interface NewMarketMessage {
  event_type: 'new_market';
  id: string;
  question: string;
  market: string;
  slug: string;
  description: string;
  assets_ids: string[];
  outcomes: string[];
  event_message: { id: string; ticker: string; slug: string; title: string; description: string };
  tags: string[];
  sports_market_type: string;
  group_item_title: string;
  line: string;
  order_price_min_tick_size: string;
  timestamp: string;
}

export interface MarketResolvedMessage {
  event_type: 'market_resolved';
  id: string;
  market: string;
  assets_ids: string[];
  winning_asset_id: string;
  winning_outcome: string;
  timestamp: string;
}

export type MarketMessage =
  | BookMessage
  | PriceChangeMessage
  | LastTradeMessage
  | TickSizeChangeMessage
  | BestBidAskMessage
  | NewMarketMessage
  | MarketResolvedMessage;
