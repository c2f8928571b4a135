/**
 * The exchange's REST endpoints, as every ingestor client reads them: `GET` with a deadline, a
 * status that is not 2xx as an `HttpStatusError` (its body discarded), the body as JSON. Retrying
 * is each caller's own business (the catalog retries, the history backfill and book resync pace
 * their own queues).
 */
export class HttpStatusError extends Error {
  override name = 'HttpStatusError';
  constructor(
    readonly status: number,
    url: string,
  ) {
    super(`GET ${url} answered ${status}`);
  }

  /** A 4xx other than throttling: asking again will not get a better answer. */
  get final(): boolean {
    return this.status >= 400 && this.status < 500 && this.status !== 429;
  }
}

export async function getJson(url: string, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<unknown> {
  const deadline = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
  const res = await fetch(url, { signal, headers: { accept: 'application/json' } });
  if (!res.ok) {
    await res.body?.cancel();
    throw new HttpStatusError(res.status, url);
  }
  return (await res.json()) as unknown;
}
