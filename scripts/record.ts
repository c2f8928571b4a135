/**
 * npm run record -- --out <folder> [--minutes N] [--events 50] [--history 20]
 *
 * Records a scenario from the REAL exchange (PROTOCOL.md base URLs; GAMMA_URL, CLOB_URL,
 * CLOB_WS_URL and SPORTS_WS_URL override them, e.g. to record from a local simulator) into
 * <folder> in PROTOCOL.md §5's format, ready for `npm run replay -- <folder>`. When the exchange
 * cannot be reached it prints one line saying so and exits 1.
 */
import { parseArgs } from 'node:util';
import { RecordError, recordScenario, type ExchangeUrls } from './lib/recorder.js';

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

function positive(name: string, value: string | undefined, fallback: number, integer: boolean): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) fail(`record: --${name} must be a positive ${integer ? 'integer' : 'number'}, got "${value}"`);
  return n;
}

async function main() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        out: { type: 'string' },
        minutes: { type: 'string' },
        events: { type: 'string' },
        history: { type: 'string' },
      },
      allowPositionals: false,
    }));
  } catch (err) {
    fail(`record: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!values.out) fail('record: --out <folder> is required (usage: npm run record -- --out <folder> --minutes N)');
  const urls = { ...LIVE_URLS };
  for (const k of Object.keys(LIVE_URLS) as Array<keyof ExchangeUrls>) {
    const v = process.env[k];
    if (v) urls[k] = v.replace(/\/+$/, '');
  }
  const summary = await recordScenario({
    urls,
    out: values.out,
    durationMs: positive('minutes', values.minutes, 5, false) * 60_000,
    maxEvents: positive('events', values.events, 50, true),
    maxHistory: positive('history', values.history, 20, true),
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
