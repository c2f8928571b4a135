import type { Logger } from '@pm/shared/logger';
import { newWriteKey, RecordRefused, retryInDoubt } from '@pm/shared/records';

/**
 * One write of the demo crowd. A refusal (stale price, market just closed…) is part of life, not an
 * error: it is logged and answered with undefined. A write in doubt (Postgres lost the connection or
 * failed over mid-commit) is sent again with the same idempotency key until it is answered
 * (retryInDoubt, up to a minute): a call that was written is answered, not made twice. `op` is given
 * the key and builds the whole input from values fixed before, so every send is the same write; the
 * writes that take no key (people, follows) are idempotent by themselves.
 */
export async function crowdWrite<T>(logger: Logger, what: string, op: (key: string) => Promise<T>, opts: { timeoutMs?: number } = {}): Promise<T | undefined> {
  const key = newWriteKey();
  try {
    return await retryInDoubt(() => op(key), {
      ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }),
      onRetry: (err, n) => logger.warn({ what, key, attempt: n, err: err.message }, 'crowd write in doubt; sending it again with its key'),
    });
  } catch (err) {
    if (err instanceof RecordRefused) {
      logger.debug({ what, code: err.code, reason: err.message }, 'crowd write refused');
      return undefined;
    }
    throw err;
  }
}
