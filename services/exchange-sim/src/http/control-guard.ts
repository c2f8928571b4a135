import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Who may use the simulator's control API (`/_sim/*`). `/_sim/resolve` settles real calls, so the
 * controls answer only a client on this machine (loopback) that sends the simulator's token as
 * `Authorization: Bearer <token>`. The exchange's own routes stay open, as the real exchange's are.
 */

export type ControlRefusal = { status: 401 | 403; error: string };

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Null when the request may use the controls, else the refusal to send. `token` null = controls off. */
export function refuseControl(
  req: { socket: { remoteAddress?: string | undefined }; headers: { authorization?: string | undefined } },
  token: string | null,
): ControlRefusal | null {
  if (token === null) return { status: 403, error: 'the control API is off: start the simulator with SIM_CONTROL_TOKEN set' };
  if (!LOOPBACK.has(req.socket.remoteAddress ?? '')) return { status: 403, error: 'the control API answers only on 127.0.0.1' };
  const header = req.headers.authorization ?? '';
  const sent = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
  if (sent === undefined) return { status: 401, error: 'the control API needs Authorization: Bearer <SIM_CONTROL_TOKEN>' };
  // Compared as digests of equal length, in constant time, so the answer's timing says nothing about the token.
  if (!timingSafeEqual(digest(sent), digest(token))) return { status: 403, error: 'wrong control token' };
  return null;
}
