import { z } from 'zod';
import { LEAGUE_KEYS } from '../domain/categories.js';
import { categorySchema } from '../api/resources.js';
import { RecordRefused } from './errors.js';

/** Handle rule: 3–20 characters of letters, digits and underscore (they appear in `/u/{handle}` links). */
export const HANDLE_PATTERN = /^[A-Za-z0-9_]{3,20}$/;
export const MAX_THESIS_LENGTH = 2000;
export const MAX_DISPLAY_NAME_LENGTH = 50;
export const MAX_BIO_LENGTH = 500;
export const MAX_INTERESTS = 20;

/** The handle without a leading `@`, refused unless it follows the handle rule. */
export function parseHandle(raw: string, what = 'handle'): string {
  const handle = typeof raw === 'string' ? raw.trim().replace(/^@/, '') : '';
  if (!HANDLE_PATTERN.test(handle)) {
    throw new RecordRefused('bad_handle', `${what} must be 3 to 20 letters, digits or underscores, got ${JSON.stringify(raw)}`);
  }
  return handle;
}

/**
 * An interest is a category (`Football`) or a category and one of its leagues joined by a colon
 * and a space (`Football: EPL`). Matching is case-insensitive and accepts a league's key or label;
 * the stored form is the canonical `Category: Label`, so every record spells it the same way.
 */
export function parseInterest(raw: string): string {
  const text = raw.trim();
  const [head, tail, ...rest] = text.split(':').map((part) => part.trim());
  const category = categorySchema.options.find((c) => c.toLowerCase() === (head ?? '').toLowerCase());
  if (category === undefined || rest.length > 0) {
    throw new RecordRefused('bad_input', `interest ${JSON.stringify(raw)} must be a category (${categorySchema.options.join(', ')}) or "Category: League"`);
  }
  if (tail === undefined) return category;
  const wanted = tail.toLowerCase();
  const league = LEAGUE_KEYS.find((l) => l.category === category && (l.key === wanted || l.label.toLowerCase() === wanted));
  if (league === undefined) {
    const known = LEAGUE_KEYS.filter((l) => l.category === category).map((l) => l.label);
    throw new RecordRefused('bad_input', `interest ${JSON.stringify(raw)}: ${category} has no league ${JSON.stringify(tail)}${known.length ? ` (known: ${known.join(', ')})` : ''}`);
  }
  return `${category}: ${league.label}`;
}

/** Parse with a zod schema; a failure becomes a `bad_input` refusal naming the field and the rule. */
export function parseInput<T>(schema: z.ZodType<T>, input: unknown, what: string): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue?.path.length ? issue.path.join('.') : what;
  throw new RecordRefused('bad_input', `${what}: ${field} ${issue?.message ?? 'is invalid'}`);
}

/** An idempotency key (write-keys.ts): any text of 1 to 200 characters the client chooses, one per write. */
export const MAX_KEY_LENGTH = 200;
const keySchema = z.string().trim().min(1, 'key must not be empty').max(MAX_KEY_LENGTH, `key must be at most ${MAX_KEY_LENGTH} characters`).optional();

const trimmed = (max: number, name: string) =>
  z.string().trim().max(max, `${name} must be at most ${max} characters`);

export const createUserSchema = z.object({
  handle: z.string(),
  displayName: trimmed(MAX_DISPLAY_NAME_LENGTH, 'displayName').min(1, 'displayName must not be empty'),
  avatar: z.string().url('avatar must be a URL').nullable().optional(),
  bio: trimmed(MAX_BIO_LENGTH, 'bio').optional(),
  interests: z.array(z.string()).max(MAX_INTERESTS, `at most ${MAX_INTERESTS} interests`).optional(),
  joinedAt: z.date().optional(),
});

export const recordCallSchema = z.object({
  handle: z.string(),
  marketId: z.string().min(1, 'marketId must not be empty'),
  outcomeIndex: z.number().int('outcomeIndex must be an integer').min(0, 'outcomeIndex must be 0 or more'),
  thesis: trimmed(MAX_THESIS_LENGTH, 'thesis'),
  copiedFrom: z.string().min(1).nullable().optional(),
  isFade: z.boolean().optional(),
  madeAt: z.date().optional(),
  key: keySchema,
});

export const thesisUpdateSchema = z.object({
  callId: z.string().min(1, 'callId must not be empty'),
  body: trimmed(MAX_THESIS_LENGTH, 'body').min(1, 'body must not be empty'),
  key: keySchema,
});

export const recordComboSchema = z.object({
  handle: z.string(),
  legs: z.array(z.object({ marketId: z.string().min(1), outcomeIndex: z.number().int().min(0) })),
  madeAt: z.date().optional(),
  key: keySchema,
});
