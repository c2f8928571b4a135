/**
 * `npm run openapi`: writes the committed API description from the endpoint table.
 *   openapi.json                           the document the API serves at /api/v1/openapi.json
 *   clients/typescript/src/schema.d.ts     the typed client's types, generated from it (openapi-typescript)
 *   docs/archive.md (its Datasets section) the archive's columns, from shared/src/archive/datasets.ts
 * Run it after changing the endpoint table or a resource schema; a test fails until you do.
 *
 * `npm run openapi -- --examples-from http://localhost:3000` first replaces the response examples
 * (shared/src/api/response-examples.json) with real answers of that running API (`npm start`):
 * each endpoint's first example request with its identifiers taken from the live data, lists cut to
 * a few items, every body checked against its schema before it is written.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  buildOpenApiDocument,
  endpointList,
  exampleUrl,
  liveExampleValues,
  withLiveValues,
  type Endpoint,
  type ResponseExample,
} from '@pm/shared/api';
import { withDatasetsSection } from '@pm/shared/archive';
import { generateSchemaTypes } from '../clients/typescript/generate.js';
import { parseCli, usageError } from './lib/cli.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const OPENAPI_FILE = path.join(root, 'openapi.json');
export const CLIENT_TYPES_FILE = path.join(root, 'clients/typescript/src/schema.d.ts');
const EXAMPLES_FILE = path.join(root, 'shared/src/api/response-examples.json');
export const ARCHIVE_DOC_FILE = path.join(root, 'docs/archive.md');

const USAGE = `usage: npm run openapi [-- --examples-from <api url>]

Writes openapi.json (the document served at /api/v1/openapi.json, from the endpoint table), the
typed client's types (clients/typescript/src/schema.d.ts) from it, and the dataset tables of
docs/archive.md (from the archive's dataset definitions).

options:
  --examples-from <url>  first refresh the response examples from a running API, e.g. http://localhost:3000
  -h, --help             this text`;

/** Items kept of each list in a response example, and the `limit` asked for. */
const EXAMPLE_ITEMS = 2;

function trimLists(value: unknown): unknown {
  if (Array.isArray(value)) {
    const objects = value.length > 0 && value.every((v) => v !== null && typeof v === 'object');
    return (objects ? value.slice(0, EXAMPLE_ITEMS + 1) : value).map(trimLists);
  }
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, trimLists(v)]));
}

async function getJson(base: string, url: string): Promise<{ status: number; type: string; body?: unknown }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 10_000);
  try {
    const res = await fetch(base + url, { signal: controller.signal });
    const type = res.headers.get('content-type') ?? '';
    // A stream (text/event-stream) never ends: its headers are all an example needs to skip it.
    if (!type.includes('application/json')) {
      controller.abort();
      return { status: res.status, type };
    }
    return { status: res.status, type, body: await res.json() };
  } finally {
    clearTimeout(timer);
  }
}

async function captureExamples(base: string): Promise<Record<string, ResponseExample>> {
  const [markets, calls] = await Promise.all([getJson(base, '/api/v1/markets?limit=1'), getJson(base, '/api/v1/calls?limit=1')]);
  if (markets.status !== 200 || calls.status !== 200) {
    throw new Error(`${base} has no data yet (markets ${markets.status}, calls ${calls.status}): start it with \`npm start\` and wait for the demo crowd's calls`);
  }
  const values = liveExampleValues({ markets: markets.body as never, calls: calls.body as never });
  const examplesOf = withLiveValues(values);
  const captured: Record<string, ResponseExample> = {};
  for (const row of endpointList) {
    const endpoint = row as unknown as Endpoint;
    const first = examplesOf(endpoint)[0] ?? { summary: endpoint.summary };
    const query = 'limit' in endpoint.params.shape ? { ...first.query, limit: String(EXAMPLE_ITEMS) } : first.query;
    const request = exampleUrl(endpoint, { ...first, ...(query ? { query } : {}) });
    const res = await getJson(base, request);
    if (res.body === undefined) {
      process.stdout.write(`openapi: ${endpoint.path}: ${res.type || 'no body'}, no JSON example\n`);
      continue;
    }
    if (res.status !== 200) throw new Error(`GET ${request} answered ${res.status}: ${JSON.stringify(res.body)}`);
    const value = trimLists(res.body);
    const checked = endpoint.response.safeParse(value);
    if (!checked.success) throw new Error(`GET ${request}: the body does not match its schema: ${checked.error.message}`);
    captured[endpoint.path] = { request: `GET ${request}`, value: value as Record<string, unknown> };
  }
  return captured;
}

/** The two committed files' contents from the endpoint table (and the given response examples). */
export async function generateFiles(responseExamples?: Record<string, ResponseExample>): Promise<{ openapi: string; clientTypes: string }> {
  const document = buildOpenApiDocument(responseExamples ? { responseExamples } : {});
  return { openapi: `${JSON.stringify(document, null, 2)}\n`, clientTypes: await generateSchemaTypes(document) };
}

async function main(): Promise<void> {
  const spec = { command: 'openapi', usage: USAGE, options: { 'examples-from': { type: 'string' } } } as const;
  const { values } = parseCli(spec);
  let responseExamples: Record<string, ResponseExample> | undefined;
  const from = values['examples-from'];
  if (from !== undefined) {
    if (!/^https?:\/\/[^/]+/.test(from)) usageError(spec, `--examples-from must be the API's base URL, e.g. http://localhost:3000, got ${JSON.stringify(from)}`);
    responseExamples = await captureExamples(from.replace(/\/+$/, ''));
    writeFileSync(EXAMPLES_FILE, `${JSON.stringify(responseExamples, null, 2)}\n`);
    process.stdout.write(`openapi: wrote ${path.relative(root, EXAMPLES_FILE)} (${Object.keys(responseExamples).length} response examples from ${from})\n`);
  }
  const files = await generateFiles(responseExamples);
  for (const [file, text] of [
    [OPENAPI_FILE, files.openapi],
    [CLIENT_TYPES_FILE, files.clientTypes],
    // The archive's dataset tables, from the one definition of its columns.
    [ARCHIVE_DOC_FILE, withDatasetsSection(readFileSync(ARCHIVE_DOC_FILE, 'utf8'))],
  ] as const) {
    const before = (() => {
      try {
        return readFileSync(file, 'utf8');
      } catch {
        return '';
      }
    })();
    writeFileSync(file, text);
    process.stdout.write(`openapi: ${before === text ? 'unchanged' : 'wrote'} ${path.relative(root, file)}\n`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`openapi failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
