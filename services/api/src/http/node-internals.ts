import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The two places the API leans on node:http's undocumented internals, kept here and nowhere else.
 * node-internals.unit.test.ts checks each one against the running Node on a real server, so a Node
 * release that changes them fails that test by name instead of changing the API's answers quietly.
 */

/**
 * Writing a 200's head from a ready block of header lines. `writeHead` checks every header name and
 * value against Node's token and character rules and classifies each one, per response: with the
 * dozen headers docs/api.md asks of every answer, that was the largest part of what a cached read
 * cost the API beyond a bare server. The lines here were checked once, when made (respond.ts
 * `headerBlock`), so they go to ServerResponse's own `_storeHeader(firstLine, headers)` — the step
 * `writeHead` ends with — as part of the first line. That step still adds Date and
 * Connection/Keep-Alive and reads the one header given to it the usual way (Content-Length: it
 * decides framing and keep-alive).
 *
 * Used only where ServerResponse has `_storeHeader` with this shape and the request does not expect a
 * 100-continue (writeHead's one other concern for a 200); anywhere else the caller uses `writeHead`.
 */
interface StoresHeader {
  _storeHeader(firstLine: string, headers: string[]): void;
}

const storeHeader = (ServerResponse.prototype as unknown as Partial<StoresHeader>)._storeHeader;

/** Whether this Node has `_storeHeader(firstLine, headers)`; the unit test requires it, so a change is seen. */
export const HEAD_BLOCKS_SUPPORTED = typeof storeHeader === 'function' && storeHeader.length === 2;

export function canWriteHeadBlock(req: IncomingMessage): boolean {
  return HEAD_BLOCKS_SUPPORTED && req.headers.expect === undefined;
}

/** A 200's head: `block` (header lines, each ending in CRLF, checked when made) and Content-Length. */
export function writeHeadBlock(res: ServerResponse, block: string, contentLength: number): void {
  res.statusCode = 200;
  res.statusMessage = 'OK';
  (res as unknown as StoresHeader)._storeHeader(`HTTP/1.1 200 OK\r\n${block}`, ['Content-Length', String(contentLength)]);
}

/**
 * Whether a response is under way on `socket` (node:http keeps the one being written as the socket's
 * `_httpMessage`). A parser error on a kept-alive connection can arrive while the previous request's
 * answer is still being written: an error answer written then would land in the middle of it. Node's
 * own default 'clientError' handling asks the same property.
 */
export function responseUnderWay(socket: Socket): boolean {
  return Boolean((socket as Socket & { _httpMessage?: unknown })._httpMessage);
}
