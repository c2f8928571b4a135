import { expect } from 'vitest';
import type { z } from 'zod';
import { errorBodySchema, type ErrorBody } from '@pm/shared/api';

/** Test helpers for reading the API's answers: a body parsed by its schema, an error checked by code. */

/** The body of `res`, parsed (and so validated) by `schema`. */
export async function body<S extends z.ZodType>(res: Response, schema: S): Promise<z.output<S>> {
  return schema.parse(await res.json());
}

/** Asserts `res` is the SPEC's error body with this status and code, as JSON; returns its message. */
export async function expectError(res: Response, status: number, code: ErrorBody['error']['code']): Promise<string> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const parsed = await body(res, errorBodySchema);
  expect(parsed.error.code).toBe(code);
  return parsed.error.message;
}
