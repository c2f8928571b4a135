import net from 'node:net';
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

/**
 * Sends raw bytes to the API at `base` and returns the raw answer, its head as sent (for requests
 * fetch() cannot make, and for header lines in their order and case). The request should ask for
 * `Connection: close`: the answer is read until the server closes.
 */
export async function rawExchange(base: string, request: string): Promise<{ status: number; head: string; body: string }> {
  const { port } = new URL(base);
  const socket = net.connect(Number(port), '127.0.0.1');
  let data = '';
  socket.on('data', (d: Buffer) => (data += d.toString('latin1')));
  await new Promise<void>((resolve, reject) => {
    socket.on('error', reject);
    socket.on('close', () => resolve());
    socket.write(request);
  });
  const end = data.indexOf('\r\n\r\n');
  const head = end === -1 ? data : data.slice(0, end);
  const body = end === -1 ? '' : data.slice(end + 4);
  return { status: Number(head.split(' ')[1]), head, body };
}
