import type { z } from 'zod';

/**
 * The two halves of every paged list (docs/design.md "Pagination"): the first page is the worker's
 * snapshot sliced to `limit`, the pages after it come from pages/pages.ts. These say when the first
 * page has a next one and turn a page's JSON text back into items.
 */

/**
 * Whether a first page cut from a snapshot of `held` items (the snapshot holds at most `capacity`)
 * has a next page: more items in the snapshot than shown, or a full snapshot (the list may go on in
 * Postgres; at worst the next page is empty and says so).
 */
export function firstPageHasMore(shown: number, held: number, capacity: number): boolean {
  return shown > 0 && (held > shown || held >= capacity);
}

/** A page's items from their JSON text; one that breaks its schema is a 500 (and logged), never served. */
export function itemsOf<T>(bodies: readonly string[], schema: z.ZodType<T>): T[] {
  return bodies.map((body) => schema.parse(JSON.parse(body)));
}
