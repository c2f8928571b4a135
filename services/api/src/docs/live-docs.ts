import { buildOpenApiDocument, endpoints, liveExampleValues, withLiveValues } from '@pm/shared/api';
import { parseParams } from '../app/adapter.js';
import type { HandlerContext } from '../app/handler.js';
import { handlers } from '../routes/index.js';

/** How long the docs page's document is reused before its examples are taken from the data again. */
const REFRESH_MS = 15_000;

const NOTE =
  'The example requests on this page come from the data being served right now (a real event, market, call and person), so every "Try it out" answers 200. `/api/v1/openapi.json` is the same document with fixed examples.';

/**
 * The OpenAPI document the docs page renders (`/api/v1/docs/openapi.json`): the served one, with
 * its example requests filled from live data (shared/src/api/live-examples.ts). The values are read
 * through the endpoints' own handlers (first item of the market list and of the call list), so the
 * page only offers what those endpoints would list; with no data yet it keeps the table's examples.
 */
export function createLiveDocument(ctx: HandlerContext): () => Promise<string> {
  let cached: { at: number; body: string } | undefined;
  const firstOf = async <T>(read: () => Promise<{ data: T } | { json: Buffer }>): Promise<T | undefined> => {
    try {
      const result = await read();
      // Both lists answer with data; a body written as JSON bytes has nothing to take examples from.
      return 'data' in result ? result.data : undefined;
    } catch {
      return undefined; // not built yet (503) or unreachable: the table's examples stand in
    }
  };
  return async () => {
    const now = ctx.clock();
    if (cached && now - cached.at < REFRESH_MS) return cached.body;
    const [markets, calls] = await Promise.all([
      firstOf(() => handlers['/api/v1/markets'](parseParams(endpoints['/api/v1/markets'], { limit: '1' }), ctx)),
      firstOf(() => handlers['/api/v1/calls'](parseParams(endpoints['/api/v1/calls'], { limit: '1' }), ctx)),
    ]);
    const values = liveExampleValues({ markets, calls });
    const document = buildOpenApiDocument({ examples: withLiveValues(values) });
    document.info.description = `${NOTE}\n\n${document.info.description}`;
    const body = JSON.stringify(document);
    // Kept only once the data gave every identifier: a page opened just after the first calls shows them.
    cached = values.eventSlug && values.callId ? { at: now, body } : undefined;
    return body;
  };
}
