import { beforeEach, describe, expect, it } from 'vitest';
import { tables } from '@pm/shared/db';
import { scoreMessageSchema } from '@pm/shared/api';
import { toStreamEntry } from '@pm/shared/stream';
import { useHarness } from '../testing/harness.js';
import { gammaEvent, waitFor } from '../testing/fake-exchange.js';
import type { Ingestor } from '../ingestor.js';

const h = useHarness('ingestor_sports');
let ingestor: Ingestor;

// Each test: the match's event alone in the catalog, no games, and a new ingestor with its sports socket open.
beforeEach(async () => {
  h.fake.events.push(
    gammaEvent('match', [{ id: 'mm', tokens: ['3000000000000000000000000000000000000000000000000000000000000000000000001', '3000000000000000000000000000000000000000000000000000000000000000000000002'] }], {
      gameId: 777,
    }),
  );
  ingestor = h.ingestor({ sportsFeed: true });
  await ingestor.start();
  await waitFor(() => h.fake.sportsSockets[0], 3000, 'sports socket');
});

/** The match kicks off and scores (one frame, then an array frame with a cricket game and a malformed entry). */
async function kickOff() {
  h.fake.broadcastSports({ gameId: 777, leagueAbbreviation: 'EPL', homeTeam: 'Arsenal', awayTeam: 'Chelsea', status: 'InProgress', score: '0-0', period: '1H', elapsed: '12', live: true, ended: false });
  h.fake.broadcastSports([
    { gameId: 777, leagueAbbreviation: 'epl', homeTeam: 'Arsenal', awayTeam: 'Chelsea', status: 'inprogress', score: '1-0', period: '1H', elapsed: '13' },
    { metadataGameId: 'cricket-1', status: 'running', score: '120/3' },
    { no: 'id' },
  ]);
  return waitFor(async () => {
    const r = await tables.games(h.database.db).findOne({ game_id: '777' });
    return r?.score === '1-0' ? r : undefined;
  }, 3000, 'game row');
}

/** The final whistle: a frame without the teams. */
async function finalWhistle() {
  h.fake.broadcastSports({ gameId: 777, status: 'Final', score: '2-1', period: 'FT' });
  return waitFor(async () => {
    const r = await tables.games(h.database.db).findOne({ game_id: '777' });
    return r?.ended ? r : undefined;
  }, 3000, 'ended');
}

describe('sports feed', () => {
  it('answers a text ping with pong and reports the feed connected', async () => {
    const sock = await waitFor(() => h.fake.sportsSockets[0], 3000, 'sports socket');
    sock.send('ping');
    await waitFor(() => sock.received.includes('pong'), 2000, 'pong');
    await waitFor(async () => (await h.redis.redis.hget(h.keys.feed, 'sports_connected')) === '1', 2000, 'sports_connected');
  });

  it('upserts games joined to their event, coalescing frames, and marks the event dirty', async () => {
    await h.redis.redis.del(h.keys.dirtyEvents);
    const row = await kickOff();
    expect(row).toMatchObject({ event_id: 'match', league: 'epl', home_team: 'Arsenal', away_team: 'Chelsea', status: 'inprogress', period: '1H', clock: '13', live: true, ended: false });
    const cricket = await tables.games(h.database.db).find({ game_id: 'cricket-1' }).select('event_id', 'live', 'score').one();
    expect(cricket).toEqual({ event_id: null, live: true, score: '120/3' });
    await ingestor.flush();
    expect(await h.redis.redis.smembers(h.keys.dirtyEvents)).toEqual(['match']);
    expect(ingestor.stats().sports.malformed).toBe(1);
  });

  it('a final frame ends the game', async () => {
    await kickOff();
    const row = await finalWhistle();
    expect(row).toMatchObject({ live: false, ended: true, score: '2-1', period: 'FT', home_team: 'Arsenal' });
  });

  it('tells the event stream of every score or state change, naming the match\'s event', async () => {
    await kickOff();
    await finalWhistle();
    await ingestor.flush();
    const event = await tables.events(h.database.db).find({ id: 'match' }).select('slug').one();
    const scores = (await h.redis.redis.xrange(h.keys.stream, '-', '+'))
      .map(([id, fields]) => toStreamEntry(id, fields))
      .filter((e) => e.topic === 'score')
      .map((e) => scoreMessageSchema.parse(JSON.parse(e.data)));
    const match = scores.filter((m) => m.game_id === '777');
    expect(match.at(-1)).toMatchObject({ event: event?.slug, score: '2-1', period: 'FT', live: false, ended: true, home_team: 'Arsenal', away_team: 'Chelsea' });
    expect(match.map((m) => m.score)).toContain('1-0');
    expect(scores.find((m) => m.game_id === 'cricket-1')).toMatchObject({ event: null, score: '120/3' });
  });
});
