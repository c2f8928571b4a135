import type { ErrorBody } from '@pm/shared/api';

export type ErrorCode = ErrorBody['error']['code'];

/** HTTP status of each error code (docs/design.md "Errors"). */
export const ERROR_STATUS: Readonly<Record<ErrorCode, number>> = {
  bad_request: 400,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  rate_limited: 429,
  headers_too_large: 431,
  unavailable: 503,
  internal: 500,
};

/** An error a user is meant to see: its code and message go into the body as they are. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;
  /** Seconds after which the same request is expected to succeed: sent as `Retry-After`. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown; retryAfterSeconds?: number },
  ) {
    super(message, options);
    this.status = ERROR_STATUS[code];
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }
}

export function errorBody(code: ErrorCode, message: string): ErrorBody {
  return { ok: false, error: { code, message } };
}

/** The generic message of a 500: never the error's own text, which may carry internals. */
export const INTERNAL_MESSAGE = 'something went wrong on our side; please try again';
