import createFetchClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

/**
 * A typed client of the prediction market data API. Paths, parameters and response bodies come
 * from the API's OpenAPI document (`openapi.json` at the repository root; `npm run openapi`
 * regenerates `schema.d.ts` from it), so a wrong path, a misspelt parameter or a field the API does
 * not send is a compile error. Requests are plain `fetch` through openapi-fetch.
 *
 *   const pm = createClient('http://localhost:3000');
 *   const { data, error } = await pm.GET('/api/v1/odds', { params: { query: { chance: 0.25 } } });
 *
 * `data` is the success body (`ok: true` …) and `error` the `{ok: false, error: {code, message}}`
 * body of a 4xx/5xx; exactly one of them is set.
 */
export function createClient(baseUrl: string, options: Omit<ClientOptions, 'baseUrl'> = {}): Client<paths> {
  return createFetchClient<paths>({ ...options, baseUrl: baseUrl.replace(/\/+$/, '') });
}

export type { components, operations, paths };
/** The API's resources by name, e.g. `Schemas['Call']`, `Schemas['Event']`, `Schemas['Odds']`. */
export type Schemas = components['schemas'];
