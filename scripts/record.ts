/**
 * npm run record -- --out <folder> [--minutes N] [--events 50] [--history 20]
 *
 * Records a scenario from the REAL exchange (docs/protocol.md base URLs; GAMMA_URL, CLOB_URL,
 * CLOB_WS_URL and SPORTS_WS_URL override them, e.g. to record from a local simulator) into
 * <folder> in docs/protocol.md §5's format, ready for `npm run replay -- <folder>`. When the exchange
 * cannot be reached it prints one line saying so and exits 1.
 */
import { parseCli, positiveOption, usageError } from './lib/cli.js';
import { RecordError, recordScenario, type ExchangeUrls } from './lib/recorder.js';

const USAGE = `usage: npm run record -- --out <folder> [--minutes N] [--events N] [--history N]

Records a scenario from the real exchange (GAMMA_URL, CLOB_URL, CLOB_WS_URL, SPORTS_WS_URL override
its addresses, e.g. to record from a local simulator) into <folder>, ready for npm run replay.

options:
  --out <folder>   where to write the scenario (required)
  --minutes N      how long to record the feeds, default 5
  --events N       at most this many events, default 50
  --history N      price histories to keep, default 20
  -h, --help       this text`;
const SPEC = { command: 'record', usage: USAGE } as const;

const LIVE_URLS: ExchangeUrls = {
  GAMMA_URL: 'https://gamma-api.polymarket.com',
  CLOB_URL: 'https://clob.polymarket.com',
  CLOB_WS_URL: 'wss://ws-subscriptions-clob.polymarket.com',
  SPORTS_WS_URL: 'wss://sports-api.polymarket.com',
};

function fail(line: string): never {
  process.stderr.write(`${line}\n`);
  process.exit(1);
}

async function main() {
  const { values } = parseCli({
    ...SPEC,
    options: {
      out: { type: 'string' },
      minutes: { type: 'string' },
      events: { type: 'string' },
      history: { type: 'string' },
    },
  });
  if (!values.out) usageError(SPEC, '--out <folder> is required');
  const durationMs = positiveOption(SPEC, 'minutes', values.minutes, 5, 'number') * 60_000;
  const maxEvents = positiveOption(SPEC, 'events', values.events, 50, 'integer');
  const maxHistory = positiveOption(SPEC, 'history', values.history, 20, 'integer');
  const urls = { ...LIVE_URLS };
  for (const k of Object.keys(LIVE_URLS) as Array<keyof ExchangeUrls>) {
    const v = process.env[k];
    if (v) urls[k] = v.replace(/\/+$/, '');
  }
  const summary = await recordScenario({
    urls,
    out: values.out,
    durationMs,
    maxEvents,
    maxHistory,
    say: (line) => process.stdout.write(`record: ${line}\n`),
  });
  process.stdout.write(
    `record: wrote ${values.out}: ${summary.events} events, ${summary.tokens} tokens on ${summary.sockets} socket(s), ` +
      `${summary.historyFiles} history files, ${summary.frames.market} market + ${summary.frames.sports} sports frames\n`,
  );
  process.exit(0);
}

main().catch((err: unknown) => {
  if (err instanceof RecordError) fail(err.message);
  fail(`record failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
});
