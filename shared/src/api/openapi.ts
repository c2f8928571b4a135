import { z } from 'zod';
import { CACHE_MAX_AGE_SECONDS, endpointList, type Endpoint, type EndpointErrorStatus, type EndpointExample } from './endpoints.js';
import { errorBodySchema, type ErrorBody } from './resources.js';
import responseExamples from './response-examples.json' with { type: 'json' };
import { EXPORT_FILE_PATH, exportFileOperation } from './exports.js';
import { resetMessageSchema, STREAM_PATH, STREAM_TOPICS, streamMessageSchemas, streamQueryParams } from './stream.js';

/**
 * The OpenAPI 3.1 document, generated from the endpoint table (never written by hand). Zod 4 emits
 * JSON Schema 2020-12, which OpenAPI 3.1 uses as is; every schema with a `.meta({id})` becomes a
 * component and is referenced with `$ref: '#/components/schemas/<id>'`.
 */

type JsonSchema = Record<string, unknown>;

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string; license: { name: string; identifier: string } };
  servers: Array<{ url: string; description?: string }>;
  /** Empty: no endpoint needs a key (docs/api.md "Authentication"). Said explicitly so tools do not guess. */
  security: [];
  tags: Array<{ name: string; description?: string }>;
  paths: Record<string, Record<string, unknown>>;
  components: {
    schemas: Record<string, JsonSchema>;
    headers: Record<string, unknown>;
    responses: Record<string, unknown>;
  };
}

const COMPONENT_REF = '#/components/schemas/';

/** Collects `$defs` of each converted schema as components and points its `$ref`s at them. */
class ComponentCollector {
  readonly schemas: Record<string, JsonSchema> = {};

  /** The JSON Schema of `schema` (output side), with ids moved to components. */
  convert(schema: z.ZodType): JsonSchema {
    const raw = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output', unrepresentable: 'throw' }) as JsonSchema;
    const { $schema: _ignored, $defs, ...root } = raw;
    if ($defs && typeof $defs === 'object') {
      for (const [id, def] of Object.entries($defs as Record<string, JsonSchema>)) {
        const clean = tidy(def) as JsonSchema;
        const existing = this.schemas[id];
        if (existing && JSON.stringify(existing) !== JSON.stringify(clean)) {
          throw new Error(`OpenAPI: two different schemas share the id ${id}`);
        }
        this.schemas[id] = clean;
      }
    }
    return tidy(root) as JsonSchema;
  }
}

/** Rewrites `#/$defs/X` refs to components and drops zod's ±MAX_SAFE_INTEGER bounds on integers (noise for readers). */
function tidy(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidy);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string' && value.startsWith('#/$defs/')) {
      out[key] = COMPONENT_REF + value.slice('#/$defs/'.length);
    } else if ((key === 'minimum' || key === 'maximum') && Math.abs(Number(value)) === Number.MAX_SAFE_INTEGER) {
      continue;
    } else {
      out[key] = tidy(value);
    }
  }
  return out;
}

const rateLimitHeaders = {
  'x-ratelimit-limit': { $ref: '#/components/headers/RateLimitLimit' },
  'x-ratelimit-remaining': { $ref: '#/components/headers/RateLimitRemaining' },
  'x-ratelimit-reset': { $ref: '#/components/headers/RateLimitReset' },
  'x-request-id': { $ref: '#/components/headers/RequestId' },
};

/** The error responses every operation refers to, each with a body the API really sends. */
const ERROR_RESPONSES: Record<400 | EndpointErrorStatus | 429 | 500, { name: string; description: string; example: ErrorBody['error'] }> = {
  400: {
    name: 'BadRequest',
    description: 'A bad parameter (`bad_request`); the message names the parameter and its rule.',
    example: { code: 'bad_request', message: 'limit must be an integer from 1 to 100' },
  },
  404: { name: 'NotFound', description: 'Nothing matches (`not_found`).', example: { code: 'not_found', message: 'no event with slug epl-ars-che-2026-11-20' } },
  429: {
    name: 'RateLimited',
    description: 'Rate limit exceeded (`rate_limited`): 120 requests a minute per client IP. `Retry-After` says how many seconds to wait.',
    example: { code: 'rate_limited', message: 'too many requests: the limit is 120 a minute per client; try again later' },
  },
  500: {
    name: 'Internal',
    description: 'Unexpected failure (`internal`); the message is generic.',
    example: { code: 'internal', message: 'something went wrong on our side; please try again' },
  },
  503: {
    name: 'Unavailable',
    description: 'Records are unavailable (`unavailable`): the data store is unreachable or the market data is not built yet.',
    example: { code: 'unavailable', message: 'market data is not ready yet; please try again shortly' },
  },
};

/**
 * What each tag groups, for readers of the reference. A tag used in the endpoint table without an
 * entry here fails `npm run lint` (the OpenAPI linter's tag-description rule).
 */
const TAG_DESCRIPTIONS: Readonly<Record<string, string>> = {
  Markets: 'Open events and their markets with live chances in five odds formats, price history and matches in play.',
  Calls: 'Public calls (picks on one outcome, scored on a notional 10) and combos of 2 to 6 picks.',
  People: "People's public records and the leaderboard.",
  Odds: 'Converting a chance into every odds format, with what 10 wins and the XP of a right call.',
  Stream: 'Live changes pushed as Server-Sent Events.',
  Archive: 'Every closed day as immutable files (Parquet and gzipped NDJSON) with their SHA-256: the manifest and the downloads.',
};

/**
 * A real success body per path, taken from the simulator with the demo crowd and trimmed to a few
 * items (`npm run openapi -- --examples-from <api url>` refreshes them). A path without one simply
 * has no example; the linter checks every example against its schema.
 */
export interface ResponseExample {
  /** The request that produced it, e.g. `GET /api/v1/markets?limit=2`. */
  request: string;
  value: Record<string, unknown>;
}
export const RESPONSE_EXAMPLES: Readonly<Record<string, ResponseExample>> = responseExamples as Record<string, ResponseExample>;

/** Example requests per endpoint: the table's own by default; the docs page passes live ones. */
export type ExamplesOf = (endpoint: Endpoint) => readonly EndpointExample[];

/** The request line of an example: path parameters filled in, query string appended. */
export function exampleUrl(endpoint: Endpoint, example: { path?: Record<string, string>; query?: Record<string, string> }): string {
  let url = endpoint.path as string;
  for (const [name, value] of Object.entries(example.path ?? {})) url = url.replace(`{${name}}`, encodeURIComponent(value));
  const query = new URLSearchParams(example.query ?? {}).toString();
  return query ? `${url}?${query}` : url;
}

function operation(
  endpoint: Endpoint,
  components: ComponentCollector,
  examplesOf: ExamplesOf,
  responseExamples: Readonly<Record<string, ResponseExample>>,
): Record<string, unknown> {
  const requestExamples = examplesOf(endpoint);
  const parameters = Object.entries(endpoint.params.shape).map(([name, schema]) => {
    const zodSchema = schema as z.ZodType;
    const inPath = endpoint.pathParams.includes(name);
    const json = components.convert(zodSchema);
    const { description, ...paramSchema } = json;
    // Examples are written as sent (strings); the document shows them as the schema's type (10, not "10").
    const examples: Record<string, { summary: string; value: unknown }> = {};
    requestExamples.forEach((e, i) => {
      const sent = (inPath ? e.path : e.query)?.[name];
      if (sent === undefined) return;
      const parsed = zodSchema.safeParse(sent);
      if (!parsed.success) throw new Error(`OpenAPI: example "${e.summary}" of ${endpoint.path} has a bad ${name}`);
      examples[`example${i + 1}`] = { summary: e.summary, value: parsed.data };
    });
    return {
      name,
      in: inPath ? 'path' : 'query',
      required: inPath || !zodSchema.safeParse(undefined).success,
      ...(typeof description === 'string' ? { description } : {}),
      schema: paramSchema,
      ...(Object.keys(examples).length > 0 ? { examples } : {}),
    };
  });

  const responseId = endpoint.response.meta()?.id;
  const responseSchema = responseId ? (components.convert(endpoint.response), { $ref: COMPONENT_REF + responseId }) : components.convert(endpoint.response);
  const maxAge = CACHE_MAX_AGE_SECONDS[endpoint.cache];

  const errorStatuses = [400, ...endpoint.errors, 429, 500].sort((a, b) => a - b) as Array<keyof typeof ERROR_RESPONSES>;
  const responses: Record<string, unknown> = {
    '200': {
      description: `Success. \`Cache-Control: public, max-age=${maxAge}\`; a strong \`ETag\` identifies the body.`,
      headers: {
        'Cache-Control': { description: `public, max-age=${maxAge}`, schema: { type: 'string', const: `public, max-age=${maxAge}` } },
        ETag: { $ref: '#/components/headers/ETag' },
        ...rateLimitHeaders,
      },
      content: { 'application/json': { schema: responseSchema, ...responseExampleOf(responseExamples[endpoint.path]) } },
    },
    '304': {
      description: 'Not modified: the `If-None-Match` request header matched the current `ETag`. No body.',
      headers: { ETag: { $ref: '#/components/headers/ETag' }, ...rateLimitHeaders },
    },
  };
  for (const status of errorStatuses) responses[String(status)] = { $ref: `#/components/responses/${ERROR_RESPONSES[status].name}` };

  return {
    operationId: endpoint.operationId,
    summary: endpoint.summary,
    description: `${endpoint.description}\n\nExamples:\n${requestExamples.map((e) => `- ${e.summary}: \`GET ${exampleUrl(endpoint, e)}\``).join('\n')}`,
    tags: [...endpoint.tags],
    parameters: [
      ...parameters,
      {
        name: 'If-None-Match',
        in: 'header',
        required: false,
        description: 'An ETag from an earlier response; when it still matches, the answer is 304 with no body.',
        schema: { type: 'string' },
      },
    ],
    responses,
    'x-examples': requestExamples.map((e) => ({ summary: e.summary, request: `GET ${exampleUrl(endpoint, e)}` })),
  };
}

/**
 * `GET /api/v1/stream` (stream.ts): a `text/event-stream` response whose messages' `data` schemas are
 * components, listed per `event:` name, with the same error responses as every endpoint.
 */
function streamOperation(components: ComponentCollector): Record<string, unknown> {
  const messages = [...STREAM_TOPICS.map((topic) => [topic, streamMessageSchemas[topic]] as const), ['reset', resetMessageSchema] as const];
  const refs = messages.map(([name, schema]) => {
    components.convert(schema);
    return { name, $ref: COMPONENT_REF + String(schema.meta()?.id) };
  });
  return {
    operationId: 'openStream',
    summary: 'Live stream (Server-Sent Events)',
    description: [
      'Price moves, match scores, settlements and new calls as they happen, as [Server-Sent Events](https://html.spec.whatwg.org/multipage/server-sent-events.html): open it with `EventSource` in a browser or `curl -N`.',
      `Each message has \`event:\` (${refs.map((r) => `\`${r.name}\``).join(', ')}), \`id:\` (a stream id, \`<ms>-<seq>\`) and \`data:\` (one line of JSON; schemas below, one per \`event:\`). A comment line (\`: heartbeat\`) is sent every 15 s so proxies keep the connection open.`,
      'Resume: reconnect with the last id received in `Last-Event-ID` (EventSource does this by itself) or `?last_event_id=`; every message after it is sent first, then live ones, without a gap, as long as the id is within the retention window (at least 10 minutes). Otherwise `event: reset` comes first: something was missed, re-read what you hold.',
      'Limits: opening a stream counts as one request against the rate limit (429 past it); at most 10 open streams per client IP at once, over all servers (429 past that); a client that does not read what is sent (about 1 MB behind) is disconnected. Every server of the service serves the same stream.',
      'A bad `topics` or a malformed `last_event_id` is a 400 and opens nothing.',
    ].join('\n\n'),
    tags: ['Stream'],
    // No example requests to run: its answer never ends (the docs page shows it live instead).
    'x-examples': [],
    parameters: streamQueryParams.map((p) => ({ name: p.name, in: 'query', required: false, description: p.description, schema: { type: 'string' }, example: p.example })),
    responses: {
      '200': {
        description: 'The stream: `Content-Type: text/event-stream`, `Cache-Control: no-store`. Messages by `event:` name: ' + refs.map((r) => `\`${r.name}\` → ${r.$ref.slice(COMPONENT_REF.length)}`).join(', ') + '.',
        headers: rateLimitHeaders,
        content: {
          'text/event-stream': {
            // The messages' `data` (JSON Schema's contentSchema of a string body); by `event:` name in x-sse-messages.
            schema: {
              type: 'string',
              description: 'Server-Sent Events; the `data:` of each message is one of these schemas, by its `event:`.',
              contentMediaType: 'text/event-stream',
              contentSchema: { oneOf: refs.map((r) => ({ $ref: r.$ref })) },
            },
            'x-sse-messages': Object.fromEntries(refs.map((r) => [r.name, { $ref: r.$ref }])),
            example: 'id: 1732492800000-0\nevent: price\ndata: {"event":"epl-ars-che-2025-11-22","market_id":"540060","outcome_index":0,"outcome":"Yes","chance":0.535,"at":"2025-11-22T15:04:05.000Z"}\n\n',
          },
        },
      },
      '400': { $ref: '#/components/responses/BadRequest' },
      '429': { $ref: '#/components/responses/RateLimited' },
      '500': { $ref: '#/components/responses/Internal' },
    },
  };
}

function responseExampleOf(example: ResponseExample | undefined): { examples?: Record<string, { summary: string; value: unknown }> } {
  return example ? { examples: { simulator: { summary: `${example.request}: a real answer of the simulator with the demo crowd (long lists cut to a few items)`, value: example.value } } } : {};
}

/**
 * Builds the document. `serverUrl` is the base URL the `/api/v1/...` paths are relative to;
 * `examples` replaces the table's example requests (the docs page fills them from live data);
 * `responseExamples` replaces the committed response examples (`npm run openapi -- --examples-from`).
 */
export function buildOpenApiDocument(
  options: { serverUrl?: string; examples?: ExamplesOf; responseExamples?: Readonly<Record<string, ResponseExample>> } = {},
): OpenApiDocument {
  const components = new ComponentCollector();
  const paths: OpenApiDocument['paths'] = {};
  const examplesOf: ExamplesOf = options.examples ?? ((endpoint) => endpoint.examples);
  for (const endpoint of endpointList) {
    paths[endpoint.path] = { get: operation(endpoint as unknown as Endpoint, components, examplesOf, options.responseExamples ?? RESPONSE_EXAMPLES) };
  }
  paths[STREAM_PATH] = { get: streamOperation(components) };
  paths[EXPORT_FILE_PATH] = { get: exportFileOperation() };
  const errorRef = (components.convert(errorBodySchema), { $ref: `${COMPONENT_REF}Error` });

  const responses: Record<string, unknown> = {};
  for (const [status, { name, description, example }] of Object.entries(ERROR_RESPONSES)) {
    responses[name] = {
      description,
      headers: {
        ...rateLimitHeaders,
        ...(status === '429' ? { 'Retry-After': { description: 'Seconds until the rate-limit window resets', schema: { type: 'integer', minimum: 0 } } } : {}),
      },
      content: { 'application/json': { schema: errorRef, example: { ok: false, error: example } } },
    };
  }

  const tags = [...new Set([...endpointList.flatMap((e) => e.tags), 'Stream'])].map((name) => {
    const description = TAG_DESCRIPTIONS[name];
    return description ? { name, description } : { name };
  });

  return {
    openapi: '3.1.0',
    info: {
      title: 'Prediction market data API',
      version: '1',
      description: [
        'Public, read-only JSON over prediction markets. No key, no sign-up; any origin may call it (CORS `*`).',
        'Every success body has `ok: true`; every failure is `{ok: false, error: {code, message}}` with codes `bad_request` (400), `not_found` (404, also unknown paths), `method_not_allowed` (405, any write verb or unknown method; `Allow: GET, HEAD, OPTIONS`), `request_timeout` (408, a request that did not arrive in time), `rate_limited` (429), `headers_too_large` (431), `internal` (500), `unavailable` (503).',
        'Rate limit: 120 requests a minute per client IP, shared by all servers. Every response carries `x-ratelimit-limit`, `x-ratelimit-remaining` and `x-ratelimit-reset` (Unix seconds when the window resets); CORS preflight (OPTIONS) requests are not counted and carry none.',
        'Caching: `Cache-Control: public, max-age=15` for live data, `30` for lists, `3600` for odds; every 200 has a strong `ETag`, and `If-None-Match` gets 304. `HEAD` is answered with the headers of the GET.',
      ].join('\n\n'),
      // No license file exists in the repository; the service's code and API are not published under an
      // open licence. Change this in one place if that is decided otherwise.
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: options.serverUrl ?? '/', description: 'This server' }],
    security: [],
    tags,
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(components.schemas).sort(([a], [b]) => a.localeCompare(b))),
      headers: {
        ETag: { description: 'Strong validator of the body; send it back in If-None-Match.', schema: { type: 'string' } },
        RateLimitLimit: { description: 'Requests allowed per window (a minute)', schema: { type: 'integer' } },
        RateLimitRemaining: { description: 'Requests left in the current window', schema: { type: 'integer', minimum: 0 } },
        RateLimitReset: { description: 'Unix seconds when the current window resets', schema: { type: 'integer' } },
        RequestId: { description: 'The request id (echoes a sane `x-request-id` request header, else generated)', schema: { type: 'string' } },
      },
      responses,
    },
  };
}
