import { describe, expect, it } from 'vitest';
import { candlesResponseSchema } from '@pm/shared/api';
import { unpackedBody, writeCandlesBody, type CandlesBody } from './candles-body.js';

/** The candles body writer against JSON.stringify of the same response with a candle object per candle: the same bytes. */

/** A small deterministic generator (mulberry32), so a failure repeats. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const ODD_STRINGS = ['', 'Will "it" rain?', 'back\\slash', 'line\nbreak\ttab', 'Évènement ünïcode — “quotes”', 'emoji 🎉', '\u0000\u001f', 'lone \ud800 surrogate'];
/** Units no tier holds: written all the same. */
const ODD_UNITS = [-1, 10_001, 32_767, -32_768, 0.5, Number.NaN];

function body(next: () => number): CandlesBody {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)] as T;
  const units = () => (next() < 0.95 ? Math.floor(next() * 10_001) : pick(ODD_UNITS));
  // Each candle's volume group (NaN: before trade data; 0 trades; odd volumes and notionals) and quotes (-1: an empty side).
  const flow = () => (next() < 0.2 ? [NaN, NaN, NaN] : next() < 0.3 ? [0, 0, 0] : [Math.floor(next() * 1e12), next() * 1e5, Math.floor(next() * 1e4)]);
  const side = () => (next() < 0.2 ? [-1, -1, -1, -1] : [units(), units(), units(), units()]);
  const fields = { ohlc: next() < 0.7, volume: next() < 0.5, quotes: next() < 0.5 };
  return {
    fields,
    event: pick(ODD_STRINGS) + 'slug',
    interval: pick(['1m', '5m', '1h', '1d'] as const),
    start: Math.floor(next() * 2e9),
    end: Math.floor(next() * 2e9),
    markets: Array.from({ length: Math.floor(next() * 4) }, (_, m) => ({
      market_id: String(540_000 + m),
      question: pick(ODD_STRINGS),
      outcome: pick(['Yes', 'No', pick(ODD_STRINGS)]),
      ...(() => {
        const n = Math.floor(next() * 300);
        return {
          candles: Array.from({ length: n }, (_, i) => [
            next() < 0.95 ? 1_764_000_000 + i * 60 : pick([0, -60, 2 ** 53, 1.5, 2 ** 53 + 2]),
            units(),
            units(),
            units(),
            units(),
          ]).flat(),
          flows: Array.from({ length: n }, flow).flat(),
          quotes: Array.from({ length: n }, () => [...side(), ...side()]).flat(),
        };
      })(),
    })),
  };
}

describe('writeCandlesBody', () => {
  it('writes what JSON.stringify writes of the unpacked response: any fields, units, volumes, empty sides, odd numbers and strings, empty lists', () => {
    const next = random(7);
    for (let run = 0; run < 300; run++) {
      const b = body(next);
      expect(writeCandlesBody(b).toString('latin1'), `run ${run}`).toBe(Buffer.from(JSON.stringify(unpackedBody(b))).toString('latin1'));
    }
    // 300 bodies of up to 300 candles with every group: a few seconds on a loaded machine.
  }, 30_000);

  it('every unit from 0 to 10,000, in a body longer than its first guess, and the contract it parses as', () => {
    const candles = Array.from({ length: 10_001 }, (_, u) => [u, u, u, u, u]).flat();
    const b: CandlesBody = { event: 'e', interval: '1m', start: 0, end: 1, markets: [{ market_id: 'm', question: 'q'.repeat(5_000), outcome: 'Yes', candles }] };
    const written = writeCandlesBody(b);
    expect(written.equals(Buffer.from(JSON.stringify(unpackedBody(b))))).toBe(true);
    expect(candlesResponseSchema.parse(JSON.parse(written.toString()))).toEqual(unpackedBody(b));
    const odd: CandlesBody = { ...b, markets: [{ ...b.markets[0]!, candles: candles.map((u, i) => (i % 5 === 0 ? u : u + 0.25)) }] };
    expect(writeCandlesBody(odd).equals(Buffer.from(JSON.stringify(unpackedBody(odd))))).toBe(true);
  });
});
