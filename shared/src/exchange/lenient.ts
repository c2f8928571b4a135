import { z } from 'zod';

/**
 * Lenient primitives for the exchange's wire formats (docs/protocol.md "General"). The exchange sends
 * numbers as strings, `""` where a number is missing, JSON arrays encoded inside strings, and time
 * strings that are not always ISO 8601. Each helper accepts every shape seen and normalises it;
 * a value that cannot be read becomes `null` rather than failing the whole object, except where the
 * field is an identity (ids), which must be present.
 */

/** A decimal given as a number or a string; `""`, null, absent or non-finite → null. */
export function toNumberOrNull(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string') {
    const t = v.trim();
    if (t === '') return null;
    const n = Number(t);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

/** A boolean given as a boolean, "true"/"false", or 1/0; anything else → null. */
export function toBooleanOrNull(v: unknown): boolean | null {
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 1 || v === '1') return true;
  if (v === 'false' || v === 0 || v === '0') return false;
  return null;
}

/**
 * A time string → ISO 8601 UTC, or null. Accepts ISO (`2026-04-05T15:10:00Z`), the Postgres-style
 * form the catalog sometimes sends (`2026-04-05 15:10:00+00`), `+0000` offsets, a bare date, and
 * Unix seconds or milliseconds as numbers or digit strings.
 */
export function toIsoTimeOrNull(v: unknown): string | null {
  if (typeof v === 'number' && Number.isFinite(v)) return epochToIso(v);
  if (typeof v !== 'string') return null;
  const t = v.trim();
  if (t === '') return null;
  if (/^\d{9,14}$/.test(t)) return epochToIso(Number(t));
  const normalised = t
    .replace(/^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)/, '$1T$2')
    // After a time, `+00` / `+0000` / ` +00:00` → `+00:00` (Date.parse wants hh:mm)
    .replace(
      /(T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s*([+-])(\d{2})(?::?(\d{2}))?$/,
      (_m, time: string, sign: string, hh: string, mm: string | undefined) => `${time}${sign}${hh}:${mm ?? '00'}`,
    )
    .replace(/\s*UTC$/i, 'Z');
  const ms = Date.parse(normalised);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

function epochToIso(n: number): string | null {
  // Below 1e11 it is seconds (1e11 s is the year 5138); above, milliseconds.
  const ms = n < 1e11 ? n * 1000 : n;
  const d = new Date(ms);
  return Number.isFinite(d.getTime()) ? d.toISOString() : null;
}

/** A string array given as an array or as a JSON-encoded string (`"[\"Yes\",\"No\"]"`); unreadable → null. */
export function toStringArrayOrNull(v: unknown): string[] | null {
  let arr: unknown = v;
  if (typeof v === 'string') {
    const t = v.trim();
    if (t === '') return null;
    try {
      arr = JSON.parse(t);
    } catch {
      return null;
    }
  }
  if (!Array.isArray(arr)) return null;
  const out: string[] = [];
  for (const x of arr) {
    if (typeof x === 'string') out.push(x);
    else if (typeof x === 'number' && Number.isFinite(x)) out.push(String(x));
    else return null;
  }
  return out;
}

/** An id given as a string or a number → non-empty string. Required: fails when absent. */
export const idString = z
  .union([z.string(), z.number()])
  .transform((v) => String(v).trim())
  .refine((v) => v.length > 0, { message: 'empty id' });

/** Optional text; non-strings (null, numbers) become null, numbers are kept as their string form. */
export const looseText = z.unknown().optional().transform((v): string | null => {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return null;
});

export const looseNumber = z.unknown().optional().transform(toNumberOrNull);
export const looseBoolean = z.unknown().optional().transform(toBooleanOrNull);
export const looseTime = z.unknown().optional().transform(toIsoTimeOrNull);
export const looseStringArray = z.unknown().optional().transform(toStringArrayOrNull);

/**
 * An array whose elements are read one by one (`read` answers null for one that does not qualify):
 * elements that fail are dropped and counted; a non-array is empty.
 */
export function readEach<T>(items: unknown, read: (el: unknown) => T | null): { items: T[]; skipped: number } {
  if (!Array.isArray(items)) return { items: [], skipped: 0 };
  const out: T[] = [];
  let skipped = 0;
  for (const item of items) {
    const r = read(item);
    if (r === null) skipped++;
    else out.push(r);
  }
  return { items: out, skipped };
}

/** `readEach` with a zod schema (its objects are never null). */
export function parseEach<T>(schema: z.ZodType<T>, items: unknown): { items: T[]; skipped: number } {
  return readEach(items, (el) => {
    const r = schema.safeParse(el);
    return r.success ? r.data : null;
  });
}

/**
 * A websocket text frame, split the way both exchange channels need (docs/protocol.md): non-JSON text
 * (`PONG`, `ping`, `NO NEW ASSETS`) as `text`; otherwise the elements — one JSON value, or each
 * element of a JSON array — for the caller to parse one by one.
 */
export function splitFrame(raw: string): { kind: 'text'; text: string } | { kind: 'elements'; elements: unknown[] } {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return { kind: 'text', text: raw.trim() };
  }
  return { kind: 'elements', elements: Array.isArray(json) ? json : [json] };
}
