import type { CandlesResponse } from '@pm/shared/api';
import { NULL_UNITS, roundMicro, SHARE_UNITS, type PackedCandles } from '../pages/candles.js';

/**
 * The candles response written as JSON bytes straight from packed candles (integers in units of
 * 1/10,000): the same bytes as `JSON.stringify` of the response with a candle object per candle
 * (`unpackedBody`), several times faster. Ten markets of a day of minutes are ~14,000 candles and
 * ~1 MB: an object and four boxed numbers per candle, then JSON.stringify turning each chance back
 * into decimal text, took ~8 ms and most of a request's garbage. A chance's text is looked up by its
 * units; anything outside 0–10,000 (never expected) goes through JSON.stringify, as does every string.
 */

const UNITS = 10_000;

/** What each candle carries (`fields=`); absent groups are not written. */
export interface CandleFields {
  ohlc: boolean;
  volume: boolean;
  quotes: boolean;
}

/** The response with each market's candles packed. */
export interface CandlesBody extends Omit<CandlesResponse, 'ok' | 'markets'> {
  /** Default: the chance's open, high, low and close only. */
  fields?: CandleFields;
  markets: Array<
    Omit<CandlesResponse['markets'][number], 'candles'> & {
      candles: PackedCandles;
      /** With `quotes`: per candle bid o, h, l, c then ask o, h, l, c in units (NULL_UNITS: that side empty). */
      quotes?: readonly number[];
      /** With `volume`: per candle volume (10^-6 shares), notional, trades; NaN before the trade data begins. */
      flows?: readonly number[];
    }
  >;
}

const OHLC_ONLY: CandleFields = { ohlc: true, volume: false, quotes: false };

/** Dollars and prices to a millionth: notional is a sum of float products, vwap a ratio. */

/** The volume group of candle k as the response has it. */
function flowsOf(flows: readonly number[] | undefined, k: number): { volume: number | null; notional: number | null; trades: number | null; vwap: number | null } {
  const v = flows?.[3 * k] ?? NaN;
  if (Number.isNaN(v)) return { volume: null, notional: null, trades: null, vwap: null };
  const nv = flows?.[3 * k + 1] as number;
  return { volume: v / SHARE_UNITS, notional: roundMicro(nv), trades: flows?.[3 * k + 2] as number, vwap: v > 0 ? roundMicro(nv / (v / SHARE_UNITS)) : null };
}

function sideOf(quotes: readonly number[] | undefined, j: number): { open: number; high: number; low: number; close: number } | null {
  const o = quotes?.[j] ?? NULL_UNITS;
  if (o === NULL_UNITS) return null;
  const q = quotes as readonly number[];
  return { open: o / UNITS, high: (q[j + 1] as number) / UNITS, low: (q[j + 2] as number) / UNITS, close: (q[j + 3] as number) / UNITS };
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
      candles: Array.from({ length: m.candles.length / 5 }, (_, k) => {
        const fields = body.fields ?? OHLC_ONLY;
        return {
          t: m.candles[5 * k] as number,
          ...(fields.ohlc
            ? {
                open: (m.candles[5 * k + 1] as number) / UNITS,
                high: (m.candles[5 * k + 2] as number) / UNITS,
                low: (m.candles[5 * k + 3] as number) / UNITS,
                close: (m.candles[5 * k + 4] as number) / UNITS,
              }
            : {}),
          ...(fields.volume ? flowsOf(m.flows, k) : {}),
          ...(fields.quotes ? { bid: sideOf(m.quotes, 8 * k), ask: sideOf(m.quotes, 8 * k + 4) } : {}),
        };
      }),
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
/** What the volume and quote groups add at most: their keys and numbers of at most 26 characters each. */
const FLOWS_MAX = ',"volume":,"notional":,"trades":,"vwap":'.length + 4 * 26;
const QUOTES_MAX = 2 * ',"bid":{"open":,"high":,"low":,"close":}'.length + 8 * 26;
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
    writeCandles(out, market, body.fields ?? OHLC_ONLY);
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
function writeCandles(out: Out, market: CandlesBody['markets'][number], fields: CandleFields): void {
  const { candles, flows, quotes } = market;
  const most = CANDLE_MAX + (fields.volume ? FLOWS_MAX : 0) + (fields.quotes ? QUOTES_MAX : 0);
  let buf = out.buf;
  let n = out.n;
  for (let i = 0, k = 0; i < candles.length; i += 5, k++) {
    if (n + most > buf.length) {
      out.n = n;
      room(out, most);
      buf = out.buf;
    }
    if (i > 0) buf[n++] = 44; // ,
    for (let x = 0; x < T.length; x++) buf[n++] = T[x] as number;
    let t = candles[i] as number;
    if (Number.isSafeInteger(t) && t >= 0) {
      const from = n;
      do {
        buf[n++] = 48 + (t % 10);
        t = Math.floor(t / 10);
      } while (t > 0);
      // Written least significant first.
      for (let p = from, q = n - 1; p < q; p++, q--) {
        const d = buf[p] as number;
        buf[p] = buf[q] as number;
        buf[q] = d;
      }
    } else {
      n += buf.write(JSON.stringify(t), n, 'latin1');
    }
    if (fields.ohlc) {
      n = ohlc(buf, n, OPEN, candles, i + 1);
    }
    if (fields.volume) {
      const f = flowsOf(flows, k);
      n += buf.write(`,"volume":${JSON.stringify(f.volume)},"notional":${JSON.stringify(f.notional)},"trades":${JSON.stringify(f.trades)},"vwap":${JSON.stringify(f.vwap)}`, n, 'latin1');
    }
    if (fields.quotes) {
      n = side(buf, n, BID, quotes, 8 * k);
      n = side(buf, n, ASK, quotes, 8 * k + 4);
    }
    buf[n++] = 125; // }
  }
  out.n = n;
}

const BID = encoder.encode(',"bid":');
const ASK = encoder.encode(',"ask":');
const NULL = encoder.encode('null');
const S_OPEN = encoder.encode('{"open":');

/** One side's candle (`,"bid":{…}` or null) at n; returns the position after it. */
function side(buf: Buffer, n: number, key: Uint8Array, quotes: readonly number[] | undefined, j: number): number {
  for (let x = 0; x < key.length; x++) buf[n++] = key[x] as number;
  const o = quotes?.[j] ?? NULL_UNITS;
  if (o === NULL_UNITS) {
    for (let x = 0; x < NULL.length; x++) buf[n++] = NULL[x] as number;
    return n;
  }
  const q = quotes as readonly number[];
  n = ohlc(buf, n, S_OPEN, q, j);
  buf[n++] = 125; // }
  return n;
}

/** The JSON text of a chance of `u` units at n; returns the position after it. */
function chance(buf: Buffer, n: number, u: number): number {
  if (!(Number.isInteger(u) && u >= 0 && u <= UNITS)) return n + buf.write(JSON.stringify(u / UNITS), n, 'latin1');
  for (let k = UNIT_AT[u] as number, to = UNIT_AT[u + 1] as number; k < to; k++) buf[n++] = UNIT_TEXT[k] as number;
  return n;
}

/**
 * `<open key>o,"high":h,"low":l,"close":c` from four packed values at j: a candle's own fields
 * (open key `,"open":`) and a quote side's object (`{"open":`) are written by this one piece.
 */
function ohlc(buf: Buffer, n: number, openKey: Uint8Array, values: readonly number[], j: number): number {
  for (let x = 0; x < openKey.length; x++) buf[n++] = openKey[x] as number;
  n = chance(buf, n, values[j] as number);
  for (let x = 0; x < HIGH.length; x++) buf[n++] = HIGH[x] as number;
  n = chance(buf, n, values[j + 1] as number);
  for (let x = 0; x < LOW.length; x++) buf[n++] = LOW[x] as number;
  n = chance(buf, n, values[j + 2] as number);
  for (let x = 0; x < CLOSE.length; x++) buf[n++] = CLOSE[x] as number;
  return chance(buf, n, values[j + 3] as number);
}
