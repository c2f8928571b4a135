import { describe, expect, it } from 'vitest';
import { parseSportsFrame, statusIsEnded, statusIsLive } from './sports.js';

describe('parseSportsFrame', () => {
  it('reads a game with a numeric gameId', () => {
    const f = parseSportsFrame(JSON.stringify({ gameId: 123, leagueAbbreviation: 'EPL', homeTeam: 'Arsenal', awayTeam: 'Chelsea', status: 'InProgress', score: '1-0', period: '2H', elapsed: '74', live: true, ended: false }));
    expect(f).toEqual({
      kind: 'updates',
      malformed: 0,
      updates: [{ gameId: '123', league: 'epl', homeTeam: 'Arsenal', awayTeam: 'Chelsea', status: 'InProgress', score: '1-0', period: '2H', elapsed: '74', live: true, ended: false }],
    });
  });
  it('uses cricket\'s metadataGameId and leaves absent fields null', () => {
    const f = parseSportsFrame(JSON.stringify({ metadataGameId: 'c-77', score: '120/3' }));
    expect(f).toMatchObject({ kind: 'updates', updates: [{ gameId: 'c-77', score: '120/3', status: null, live: null }] });
  });
  it('reports text ping, counts frames without a game id', () => {
    expect(parseSportsFrame('ping')).toEqual({ kind: 'text', text: 'ping' });
    expect(parseSportsFrame(JSON.stringify([{ score: '1-1' }, { gameId: 5 }]))).toMatchObject({ malformed: 1, updates: [{ gameId: '5' }] });
  });
  it('compares status case-insensitively', () => {
    expect(statusIsLive('inprogress')).toBe(true);
    expect(statusIsLive('Running')).toBe(true);
    expect(statusIsEnded('Final')).toBe(true);
    expect(statusIsEnded('finished')).toBe(true);
    expect(statusIsLive('Scheduled')).toBeNull();
  });
});
