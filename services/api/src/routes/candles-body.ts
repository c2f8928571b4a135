import type { CandlesResponse } from '@pm/shared/api';
import type { PackedCandles } from '../pages/candles.js';

/**
 * The candles response written as JSON bytes straight from packed candles (integers in units of
 * 1/10,000): the same bytes as `JSON.stringify` of the response with a candle object per candle
 * (`unpackedBody`), several times faster. Ten markets of a day of minutes are ~14,000 candles and
 * ~1 MB: an object and four boxed numbers per candle, then JSON.stringify turning each chance back
 * into decimal text, took ~8 ms and most of a request's garbage. A chance's text is looked up by its
 * units; anything outside 0–10,000 (never expected) goes through JSON.stringify, as does every string.
 */

const UNITS = 10_000;

/** The response with each market's candles packed. */
export interface CandlesBody extends Omit<CandlesResponse, 'ok' | 'markets'> {
  markets: Array<Omit<CandlesResponse['markets'][number], 'candles'> & { candles: PackedCandles }>;
}

/** The response as JSON.stringify sees it: a candle object per candle (for tests and comparison). */
export function unpackedBody(body: CandlesBody): CandlesResponse {
  return {
    ok: true,
    event: body.event,
    interval: body.interval,
    start: body.start,
    end: body.end,
    markets: body.markets.map((m) => ({
      market_id: m.market_id,
      question: m.question,
      outcome: m.outcome,
      candles: Array.from({ length: m.candles.length / 5 }, (_, k) => ({
        t: m.candles[5 * k] as number,
        open: (m.candles[5 * k + 1] as number) / UNITS,
        high: (m.candles[5 * k + 2] as number) / UNITS,
        low: (m.candles[5 * k + 3] as number) / UNITS,
        close: (m.candles[5 * k + 4] as number) / UNITS,
      })),
    })),
  };
}

const encoder = new TextEncoder();

/** The JSON text of u / 10,000 for every u, back to back; unit u is UNIT_TEXT[UNIT_AT[u] .. UNIT_AT[u + 1]). */
const UNIT_AT = new Uint32Array(UNITS + 2);
const UNIT_TEXT = (() => {
  const texts = Array.from({ length: UNITS + 1 }, (_, u) => JSON.stringify(u / UNITS));
  for (let u = 0; u <= UNITS; u++) UNIT_AT[u + 1] = (UNIT_AT[u] as number) + (texts[u] as string).length;
  return encoder.encode(texts.join(''));
})();

const T = encoder.encode('{"t":');
const OPEN = encoder.encode(',"open":');
const HIGH = encoder.encode(',"high":');
const LOW = encoder.encode(',"low":');
const CLOSE = encoder.encode(',"close":');
/** The most a candle takes: its keys, a 16-digit t and four chances, each at most 26 characters when JSON.stringify writes it. */
const CANDLE_MAX = T.length + OPEN.length + HIGH.length + LOW.length + CLOSE.length + 5 * 26 + 2;
/** Room for a candle of looked-up chances and a t of up to 16 digits: what the buffer is first sized by. */
const CANDLE_USUAL = T.length + OPEN.length + HIGH.length + LOW.length + CLOSE.length + 16 + 4 * 6 + 2;

export function writeCandlesBody(body: CandlesBody): Buffer {
  const out = { buf: Buffer.allocUnsafe(1024 + (CANDLE_USUAL * body.markets.reduce((k, m) => k + m.candles.length, 0)) / 5), n: 0 };
  const text = (s: string) => {
    room(out, 3 * s.length);
    out.n += out.buf.write(s, out.n);
  };
  text(`{"ok":true,"event":${JSON.stringify(body.event)},"interval":${JSON.stringify(body.interval)},"start":${JSON.stringify(body.start)},"end":${JSON.stringify(body.end)},"markets":[`);
  for (let m = 0; m < body.markets.length; m++) {
    const market = body.markets[m]!;
    text(`${m === 0 ? '' : ','}{"market_id":${JSON.stringify(market.market_id)},"question":${JSON.stringify(market.question)},"outcome":${JSON.stringify(market.outcome)},"candles":[`);
    writeCandles(out, market.candles);
    text(']}');
  }
  text(']}');
  return out.buf.subarray(0, out.n);
}

interface Out {
  buf: Buffer;
  n: number;
}

function room(out: Out, bytes: number): void {
  if (out.n + bytes <= out.buf.length) return;
  const bigger = Buffer.allocUnsafe(Math.max(2 * out.buf.length, out.n + bytes));
  out.buf.copy(bigger, 0, 0, out.n);
  out.buf = bigger;
}

/** The candles, comma-separated: the hot loop, on locals (buffer and position) rather than closures. */
function writeCandles(out: Out, candles: PackedCandles): void {
  let buf = out.buf;
  let n = out.n;
  for (let i = 0; i < candles.length; i += 5) {
    if (n + CANDLE_MAX > buf.length) {
      out.n = n;
      room(out, CANDLE_MAX);
      buf = out.buf;
    }
    if (i > 0) buf[n++] = 44; // ,
    for (let k = 0; k < T.length; k++) buf[n++] = T[k] as number;
    let x = candles[i] as number;
    if (Number.isSafeInteger(x) && x >= 0) {
      const from = n;
      do {
        buf[n++] = 48 + (x % 10);
        x = Math.floor(x / 10);
      } while (x > 0);
      // Written least significant first.
      for (let p = from, q = n - 1; p < q; p++, q--) {
        const d = buf[p] as number;
        buf[p] = buf[q] as number;
        buf[q] = d;
      }
    } else {
      n += buf.write(JSON.stringify(x), n, 'latin1');
    }
    for (let k = 0; k < OPEN.length; k++) buf[n++] = OPEN[k] as number;
    n = chance(buf, n, candles[i + 1] as number);
    for (let k = 0; k < HIGH.length; k++) buf[n++] = HIGH[k] as number;
    n = chance(buf, n, candles[i + 2] as number);
    for (let k = 0; k < LOW.length; k++) buf[n++] = LOW[k] as number;
    n = chance(buf, n, candles[i + 3] as number);
    for (let k = 0; k < CLOSE.length; k++) buf[n++] = CLOSE[k] as number;
    n = chance(buf, n, candles[i + 4] as number);
    buf[n++] = 125; // }
  }
  out.n = n;
}

/** The JSON text of a chance of `u` units at n; returns the position after it. */
function chance(buf: Buffer, n: number, u: number): number {
  if (!(Number.isInteger(u) && u >= 0 && u <= UNITS)) return n + buf.write(JSON.stringify(u / UNITS), n, 'latin1');
  for (let k = UNIT_AT[u] as number, to = UNIT_AT[u + 1] as number; k < to; k++) buf[n++] = UNIT_TEXT[k] as number;
  return n;
}
