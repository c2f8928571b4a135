import { describe, expect, it } from 'vitest';
import { endpointList, endpoints } from '@pm/shared/api';
import { parseParams } from './adapter.js';
import { ApiError } from '../http/errors.js';

/** Parameter rules of the endpoint table, as a user sees them: the value parsed, or the 400 message. */

function rejection(run: () => unknown): { code: string; message: string } {
  try {
    run();
  } catch (err) {
    if (err instanceof ApiError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('expected a rejection');
}

const markets = endpoints['/api/v1/markets'];
const odds = endpoints['/api/v1/odds'];
const event = endpoints['/api/v1/markets/{eventSlug}'];

describe('GET /api/v1/markets parameters', () => {
  it('defaults limit to 24 and leaves the rest unset', () => {
    expect(parseParams(markets, {})).toEqual({ limit: 24 });
  });

  it('parses valid values, normalising the category spelling', () => {
    expect(parseParams(markets, { limit: '60', category: 'football', league: 'epl', q: 'arsenal' })).toEqual({
      limit: 60,
      category: 'Football',
      league: 'epl',
      q: 'arsenal',
    });
    expect(parseParams(markets, { limit: '1' }).limit).toBe(1);
  });

  it('treats empty values as omitted', () => {
    expect(parseParams(markets, { limit: '', category: '', q: '', league: '' })).toEqual({ limit: 24 });
  });

  it.each(['0', '61', '1.5', 'abc', '-1', '1e1', '0x10', ' 5', '99999999999999999999'])('refuses limit=%s without clamping', (limit) => {
    expect(rejection(() => parseParams(markets, { limit }))).toEqual({ code: 'bad_request', message: 'limit must be an integer from 1 to 60' });
  });

  it('names the allowed categories', () => {
    expect(rejection(() => parseParams(markets, { category: 'Foo' })).message).toBe(
      'category must be one of Football, Sport, Crypto, Politics, Economy, Tech, Culture',
    );
  });

  it('caps q at 80 characters', () => {
    expect(parseParams(markets, { q: 'x'.repeat(80) }).q).toHaveLength(80);
    expect(rejection(() => parseParams(markets, { q: 'x'.repeat(81) })).message).toBe('q must be a string of at most 80 characters');
  });
});

describe('GET /api/v1/odds parameters', () => {
  it.each([
    ['0.25', 0.25],
    ['.5', 0.5],
    ['0.999', 0.999],
    ['0.001', 0.001],
    ['0.5355', 0.5355],
    ['0', 0],
    ['0.0', 0],
    ['1', 1],
    ['1.000', 1],
  ])('accepts chance=%s', (chance, value) => {
    expect(parseParams(odds, { chance })).toEqual({ chance: value });
  });

  it.each(['0.000001', '0.0005', '0.9995', '0.9999', '1.5', '2', 'abc', 'NaN', 'Infinity', '0x1', '1e-3', '1e-400', '-0.5', '+0.5', '0.5 ', '0.1234567890123456789'])(
    'refuses chance=%s',
    (chance) => {
      expect(rejection(() => parseParams(odds, { chance }))).toEqual({
        code: 'bad_request',
        message: 'chance must be a decimal number that is 0, 1, or from 0.001 to 0.999 (the exchange quotes nothing in between), e.g. 0.25',
      });
    },
  );

  it('says chance is required when it is missing or empty', () => {
    for (const raw of [{}, { chance: '' }] as Array<Record<string, string>>) {
      expect(rejection(() => parseParams(odds, raw)).message).toBe('chance is required: a decimal number that is 0, 1, or from 0.001 to 0.999 (the exchange quotes nothing in between), e.g. 0.25');
    }
  });
});

describe('GET /api/v1/markets/{eventSlug} parameters', () => {
  it('takes the slug as given and refuses an absurdly long one', () => {
    expect(parseParams(event, { eventSlug: 'Some-Slug' })).toEqual({ eventSlug: 'Some-Slug' });
    expect(rejection(() => parseParams(event, { eventSlug: 'x'.repeat(201) })).message).toMatch(/^eventSlug must be/);
  });
});

describe('the endpoint table', () => {
  it('gives every endpoint an Express path matching its OpenAPI path', () => {
    expect(endpointList.map((e) => [e.path, e.expressPath])).toEqual([
      ['/api/v1/markets', '/api/v1/markets'],
      ['/api/v1/markets/by-id', '/api/v1/markets/by-id'],
      ['/api/v1/markets/{eventSlug}', '/api/v1/markets/:eventSlug'],
      ['/api/v1/markets/by-id/{marketId}', '/api/v1/markets/by-id/:marketId'],
      ['/api/v1/markets/{eventSlug}/history', '/api/v1/markets/:eventSlug/history'],
      ['/api/v1/markets/{eventSlug}/candles', '/api/v1/markets/:eventSlug/candles'],
      ['/api/v1/markets/{eventSlug}/book', '/api/v1/markets/:eventSlug/book'],
      ['/api/v1/markets/{eventSlug}/trades', '/api/v1/markets/:eventSlug/trades'],
      ['/api/v1/live', '/api/v1/live'],
      ['/api/v1/calls', '/api/v1/calls'],
      ['/api/v1/calls/{id}', '/api/v1/calls/:id'],
      ['/api/v1/users/{handle}', '/api/v1/users/:handle'],
      ['/api/v1/users/{handle}/calls', '/api/v1/users/:handle/calls'],
      ['/api/v1/leaderboard', '/api/v1/leaderboard'],
      ['/api/v1/combos', '/api/v1/combos'],
      ['/api/v1/odds', '/api/v1/odds'],
      ['/api/v1/exports', '/api/v1/exports'],
    ]);
  });

  it('has examples whose parameters pass its own validation', () => {
    for (const endpoint of endpointList) {
      expect(endpoint.examples.length, endpoint.path).toBeGreaterThan(0);
      for (const example of endpoint.examples) {
        expect(() => parseParams(endpoint as never, { ...example.path, ...example.query }), `${endpoint.path}: ${example.summary}`).not.toThrow();
      }
    }
  });
});
