/** Why the write path refused a record. Thrown before anything is written. */
export type RecordRefusedCode =
  | 'unknown_user'
  | 'handle_taken'
  | 'bad_handle'
  | 'bad_input'
  | 'unknown_market'
  | 'market_closed'
  | 'unknown_outcome'
  | 'stale_price'
  | 'bad_leg_count'
  | 'duplicate_leg_market'
  | 'unknown_call'
  | 'self_follow';

/** A refusal of the write path: a clear message, a stable code, and nothing written. */
export class RecordRefused extends Error {
  override name = 'RecordRefused';
  constructor(
    readonly code: RecordRefusedCode,
    message: string,
  ) {
    super(message);
  }
}
