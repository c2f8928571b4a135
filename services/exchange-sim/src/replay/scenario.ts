import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { z } from 'zod';

/**
 * A recorded (or hand-made) scenario folder, docs/protocol.md §5: catalog.json, optional sports.json,
 * optional history/<tokenId>.json, and feed.jsonl. Only the fields the simulator acts on are
 * checked; everything else is kept exactly as written, because the catalog is served as given.
 */
/** The catalog writes ids and amounts as numbers or as text. */
const numberOrText = z.union([z.number(), z.string()]);
const text = z.string().optional();
const flag = z.boolean().nullish();
/** A game id or an amount, when given. */
const maybeNumber = numberOrText.nullish();
const maybeText = z.string().nullish();

const tagSchema = z.looseObject({ id: numberOrText, slug: text, label: text });

const marketSchema = z.looseObject({ id: numberOrText, conditionId: text, outcomes: text, clobTokenIds: text, closed: z.boolean().optional() });

const eventSchema = z.looseObject({
  id: numberOrText,
  slug: maybeText,
  active: flag,
  closed: flag,
  live: flag,
  gameId: maybeNumber,
  volume: maybeNumber,
  volume24hr: maybeNumber,
  liquidity: maybeNumber,
  startDate: maybeText,
  endDate: maybeText,
  tags: z.array(tagSchema).nullish(),
  markets: z.array(marketSchema).default([]),
});

export type ReplayEvent = z.infer<typeof eventSchema>;
export type ReplayMarket = z.infer<typeof marketSchema>;

const feedLineSchema = z.object({
  at: z.number().min(0),
  channel: z.enum(['market', 'sports']),
  frame: z.unknown(),
});

export type FeedLine = z.infer<typeof feedLineSchema>;

/**
 * Optional `catalog-updates.jsonl` (our extension of docs/protocol.md §5): one line per change of the
 * served catalog, `{"at": <ms since start>, "event": <an event as GET /events returns it>}`. At
 * `at` (on the feed's timeline, so scaled by the speed) the event replaces the catalog's event with
 * the same `id`, or is added when there is none. This is how a scenario closes a market with final
 * prices, as the real catalog does when a resolution never reaches the ws.
 */
const catalogUpdateSchema = z.object({ at: z.number().min(0), event: eventSchema });

export type CatalogUpdate = z.infer<typeof catalogUpdateSchema>;

export const historyFileSchema = z.object({
  history: z.array(z.object({ t: z.number(), p: z.number() })),
});

export interface Scenario {
  folder: string;
  catalog: ReplayEvent[];
  sports: unknown[];
  feed: FeedLine[];
  catalogUpdates: CatalogUpdate[];
}

export class ScenarioError extends Error {
  override name = 'ScenarioError';
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ScenarioError(`cannot read ${path}: ${(err as Error).message}`);
  }
}

export function loadScenario(folder: string): Scenario {
  const catalog = z.array(eventSchema).safeParse(readJson(join(folder, 'catalog.json')));
  if (!catalog.success) throw new ScenarioError(`catalog.json: ${catalog.error.issues[0]?.message ?? 'invalid'}`);
  const sportsPath = join(folder, 'sports.json');
  const sports = existsSync(sportsPath) ? z.array(z.unknown()).parse(readJson(sportsPath)) : [];
  const feed = readJsonLines(join(folder, 'feed.jsonl'), feedLineSchema);
  // Stable sort: frames recorded at the same ms keep their file order.
  feed.sort((a, b) => a.at - b.at);
  const catalogUpdates = readJsonLines(join(folder, 'catalog-updates.jsonl'), catalogUpdateSchema);
  catalogUpdates.sort((a, b) => a.at - b.at);
  return { folder, catalog: catalog.data, sports, feed, catalogUpdates };
}

function readJsonLines<T>(path: string, schema: z.ZodType<T>): T[] {
  if (!existsSync(path)) return [];
  const name = basename(path);
  const out: T[] = [];
  readFileSync(path, 'utf8').split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new ScenarioError(`${name} line ${i + 1}: not JSON`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new ScenarioError(`${name} line ${i + 1}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    out.push(parsed.data);
  });
  return out;
}

/** Parse one of Gamma's JSON-encoded string arrays ("[\"Yes\",\"No\"]"); [] when absent or malformed. */
export function parseStringArray(value: string | undefined): string[] {
  if (!value) return [];
  try {
    const parsed = z.array(z.union([z.string(), z.number()])).safeParse(JSON.parse(value));
    return parsed.success ? parsed.data.map(String) : [];
  } catch {
    return [];
  }
}
