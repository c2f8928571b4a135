import type { Endpoint, EndpointExample } from './endpoints.js';
import type { ExamplesOf } from './openapi.js';

/**
 * Example requests filled from the data being served, so that every "Try it out" on the docs page
 * (and every captured response example) answers 200 instead of a 404 on a made-up slug or id.
 *
 * The table's examples say WHAT to show (a summary and which parameters); this module swaps their
 * identifier values for live ones, by parameter name:
 *
 * | parameter | becomes |
 * |---|---|
 * | `eventSlug`, `events` | the slug of the first trending event |
 * | `marketId`, `market` on an event's path | the first market of that event |
 * | `market` elsewhere | the market of the newest call (a market that has calls) |
 * | `id` under `/api/v1/calls` | the newest call's id |
 * | `ids` | the first market of the first trending event |
 * | `handle`, `around` | the newest call's caller (`handle` keeps the example's leading `@` and upper case) |
 *
 * Values the data does not give (nothing listed yet) keep the table's own.
 */

/** Identifiers taken from the current data. */
export interface LiveExampleValues {
  eventSlug?: string;
  /** A market of `eventSlug`. */
  eventMarketId?: string;
  callId?: string;
  handle?: string;
  /** The market of `callId`. */
  calledMarketId?: string;
}

/** The parts of a market list and a call list body this needs (so any version of them will do). */
export interface LiveExampleSources {
  markets?: { events: ReadonlyArray<{ slug: string; markets: ReadonlyArray<{ id: string }> }> } | undefined;
  calls?: { calls: ReadonlyArray<{ id: string; market_id: string; user: { handle: string } }> } | undefined;
}

/** Picks the identifiers from a market list (`GET /api/v1/markets`) and a call list (`GET /api/v1/calls`). */
export function liveExampleValues(sources: LiveExampleSources): LiveExampleValues {
  const event = sources.markets?.events[0];
  const call = sources.calls?.calls[0];
  const values: LiveExampleValues = {};
  if (event) {
    values.eventSlug = event.slug;
    if (event.markets[0]) values.eventMarketId = event.markets[0].id;
  }
  if (call) {
    values.callId = call.id;
    values.handle = call.user.handle;
    values.calledMarketId = call.market_id;
  }
  return values;
}

function liveValue(endpoint: Endpoint, name: string, given: string, values: LiveExampleValues): string | undefined {
  switch (name) {
    case 'eventSlug':
    case 'events':
      return values.eventSlug;
    case 'marketId':
      return values.eventMarketId;
    case 'market':
      return endpoint.pathParams.includes('eventSlug') ? values.eventMarketId : values.calledMarketId;
    case 'id':
      return endpoint.path.startsWith('/api/v1/calls/') ? values.callId : undefined;
    case 'ids':
      return values.eventMarketId;
    case 'around':
      return values.handle;
    case 'handle': {
      if (values.handle === undefined) return undefined;
      // "With @, any case" examples keep showing that: same person, spelled as the example spells.
      const handle = /[A-Z]/.test(given) ? values.handle.toUpperCase() : values.handle;
      return given.startsWith('@') ? `@${handle}` : handle;
    }
    default:
      return undefined;
  }
}

function fill(endpoint: Endpoint, params: Record<string, string> | undefined, values: LiveExampleValues): Record<string, string> | undefined {
  if (!params) return undefined;
  return Object.fromEntries(Object.entries(params).map(([name, given]) => [name, liveValue(endpoint, name, given, values) ?? given]));
}

/** The table's example requests with their identifiers replaced by live ones. */
export function withLiveValues(values: LiveExampleValues): ExamplesOf {
  return (endpoint) =>
    endpoint.examples.map((example): EndpointExample => {
      const path = fill(endpoint, example.path, values);
      const query = fill(endpoint, example.query, values);
      return { summary: example.summary, ...(path ? { path } : {}), ...(query ? { query } : {}) };
    });
}
