import { CATEGORIES, CATEGORY_DISPLAY_ORDER, type Category } from '@pm/shared/api';
import { LIST_SNAPSHOT_SIZE } from '@pm/shared/snapshots';
import type { SnapshotName } from '@pm/shared/redis';
import type { CatalogEvent, CatalogOutcome, Chances } from './model.js';
import { buildEventCard, buildLeagueEntries, busiestFirst, cardMarkets, listedLeagueKeys, listedOpen, outcomeChance, searchText } from './payloads.js';

/**
 * The list snapshots of buildListSnapshots (payloads.ts), as the JSON text the writer stores, in time
 * proportional to what changed since the previous call (pure: no I/O, only memory between calls).
 *
 * Why: a build runs every ~250 ms while prices move, and a move touches a handful of events. Building
 * every card of 5,000 open events and stringifying every list (the search body alone is ~5 MB) on
 * every build kept the worker busy most of a core. So:
 * - each listed event's card and search entry are kept as JSON text, and rebuilt only when the event
 *   object changed (the catalog cache hands out new objects when it reloads and never mutates one it
 *   handed out) or the chance of an outcome the card shows did (a card shows nothing else that moves);
 * - the busiest-first order, the leagues and which events each list holds depend only on the open
 *   events: worked out again only when they are not the same objects in the same order as last time;
 * - a list body is assembled from those fragments by hand, and only when one of its fragments
 *   changed: otherwise the previous body string is handed back, so a caller can tell it unchanged
 *   cheaply.
 * The text is exactly JSON.stringify of the payload buildListSnapshots makes (same key order, no
 * spaces): a unit test holds the two equal, over builds in which chances move and events come and go.
 * Cards are built for one `webUrl`, fixed per assembler.
 */

export interface ListBody {
  name: SnapshotName;
  /** JSON text of the list's payload. */
  body: string;
}

export interface ListBodies {
  /** trending, each category, each league with open events (buildListSnapshots' order), then `markets:search`. */
  lists: ListBody[];
  /** League keys that have a `markets:league:<key>` list. */
  leagueKeys: string[];
  /** Cards (and their search entries) built by this call: the work it did. */
  cardsBuilt: number;
}

export interface ListAssembler {
  /** @param ranking the ranking version the lists are cut from (written into every list body). */
  build(openEvents: readonly CatalogEvent[], chances: Chances, ranking?: number): ListBodies;
  /** The listed events, busiest first (the order a ranking version records), worked out as `build` does. */
  order(openEvents: readonly CatalogEvent[]): readonly CatalogEvent[];
}

/** One listed event's JSON fragments and what they were built from. */
interface Fragments {
  event: CatalogEvent;
  /** The outcomes the card shows, and their chances when `card` was built. */
  shown: CatalogOutcome[];
  chances: number[];
  /** The search entry up to its card: `{"text":…,"category":…,"league":…,"card":` (the event alone decides it). */
  entryHead: string;
  /** JSON.stringify of the event's card. */
  card: string;
  /** JSON.stringify of the event's search entry. */
  entry: string;
}

/** What depends only on the open events (not on chances). */
interface Layout {
  /** The open events it was worked out from, as given. */
  input: readonly CatalogEvent[];
  /** Listed events (open, with an open market), busiest first. */
  ordered: CatalogEvent[];
  /** `{"categories":[…],"leagues":[…],`: how every list body and the search body start. */
  head: string;
  /** Each list and its events, as positions in `ordered` (at most LIST_SNAPSHOT_SIZE). */
  lists: Array<{ name: SnapshotName; members: number[] }>;
  leagueKeys: string[];
}

interface Assembled {
  head: string;
  parts: readonly string[];
  body: string;
}

export function createListAssembler(webUrl: string): ListAssembler {
  /** By event id: the fragments of every event listed in the last layout. */
  const fragments = new Map<string, Fragments>();
  let layout: Layout | undefined;
  /** By list name: the body handed out last time and the fragments it was assembled from. */
  let assembled = new Map<SnapshotName, Assembled>();

  function layoutFor(openEvents: readonly CatalogEvent[]): Layout {
    if (layout !== undefined && sameItems(layout.input, openEvents)) return layout;
    const ordered = busiestFirst(openEvents.filter(listedOpen));
    const leagues = buildLeagueEntries(ordered);
    const leagueKeys = listedLeagueKeys(leagues);
    // buildListSnapshots lists `[...CATEGORY_DISPLAY_ORDER]`: the same JSON.
    const head = `{"categories":${JSON.stringify(CATEGORY_DISPLAY_ORDER)},"leagues":${JSON.stringify(leagues)},`;

    // One pass in busiest-first order fills every list with its first LIST_SNAPSHOT_SIZE events, as
    // filtering `ordered` per list and slicing would.
    const trending: number[] = [];
    const byCategory = new Map<Category, number[]>(CATEGORIES.map((c) => [c, []]));
    const byLeague = new Map<string, number[]>(leagueKeys.map((k) => [k, []]));
    ordered.forEach((e, i) => {
      for (const members of [trending, byCategory.get(e.category), e.league === null ? undefined : byLeague.get(e.league)]) {
        if (members !== undefined && members.length < LIST_SNAPSHOT_SIZE) members.push(i);
      }
    });
    const lists: Layout['lists'] = [{ name: 'markets:trending', members: trending }];
    for (const category of CATEGORIES) lists.push({ name: `markets:category:${category}`, members: byCategory.get(category) ?? [] });
    for (const key of leagueKeys) lists.push({ name: `markets:league:${key}`, members: byLeague.get(key) ?? [] });

    // Forget the fragments of events no longer listed (closed, or gone from the catalog).
    const listed = new Set(ordered.map((e) => e.id));
    for (const id of fragments.keys()) if (!listed.has(id)) fragments.delete(id);
    layout = { input: [...openEvents], ordered, head, lists, leagueKeys };
    return layout;
  }

  function render(f: Fragments, chances: Chances): void {
    f.chances = f.shown.map((o) => outcomeChance(o, chances));
    f.card = JSON.stringify(buildEventCard(f.event, chances, webUrl));
    f.entry = `${f.entryHead}${f.card}}`;
  }

  /** Whether a chance the card shows differs from the one it was built with. */
  function moved(f: Fragments, chances: Chances): boolean {
    for (let i = 0; i < f.shown.length; i++) {
      const o = f.shown[i];
      // Object.is: never takes one value for another (0 and -0 included), so no rebuild is missed.
      if (o !== undefined && !Object.is(outcomeChance(o, chances), f.chances[i])) return true;
    }
    return false;
  }

  /** The event's fragments, from memory when neither the event nor a chance its card shows changed. */
  function fragmentsOf(event: CatalogEvent, chances: Chances, built: { count: number }): Fragments {
    const known = fragments.get(event.id);
    if (known !== undefined && known.event === event) {
      if (moved(known, chances)) {
        render(known, chances);
        built.count += 1;
      }
      return known;
    }
    const f: Fragments = {
      event,
      shown: cardMarkets(event).flatMap((m) => m.outcomes),
      chances: [],
      entryHead: `{"text":${JSON.stringify(searchText(event))},"category":${JSON.stringify(event.category)},"league":${JSON.stringify(event.league)},"card":`,
      card: '',
      entry: '',
    };
    render(f, chances);
    fragments.set(event.id, f);
    built.count += 1;
    return f;
  }

  /** The body of list `name` over `parts`: the previous string when nothing in it changed. */
  function assemble(next: Map<SnapshotName, Assembled>, name: SnapshotName, head: string, field: 'events' | 'entries', parts: readonly string[]): string {
    const prev = assembled.get(name);
    const same = prev !== undefined && prev.head === head && sameItems(prev.parts, parts);
    const body = same ? prev.body : `${head}"${field}":[${parts.join(',')}]}`;
    next.set(name, { head, parts, body });
    return body;
  }

  return {
    order: (openEvents) => layoutFor(openEvents).ordered,
    build(openEvents, chances, ranking) {
      const layout = layoutFor(openEvents);
      const { ordered, lists, leagueKeys } = layout;
      // buildListSnapshots puts `ranking` first when there is one.
      const head = ranking === undefined ? layout.head : `{"ranking":${ranking},${layout.head.slice(1)}`;
      const built = { count: 0 };
      const cards: string[] = [];
      const entries: string[] = [];
      for (const event of ordered) {
        const f = fragmentsOf(event, chances, built);
        cards.push(f.card);
        entries.push(f.entry);
      }
      const next = new Map<SnapshotName, Assembled>();
      const bodies: ListBody[] = lists.map(({ name, members }) => ({
        name,
        body: assemble(next, name, head, 'events', members.map((i) => cards[i] ?? '')),
      }));
      bodies.push({ name: 'markets:search', body: assemble(next, 'markets:search', head, 'entries', entries) });
      assembled = next; // only this build's lists: a league list gone is not kept
      return { lists: bodies, leagueKeys, cardsBuilt: built.count };
    },
  };
}

/** Same length and the same items (by identity for objects; strings by value, by pointer first) in the same order. */
function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
