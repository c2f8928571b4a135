import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../services/exchange-sim/src/simulator.js';
import { loadScenario } from '../../services/exchange-sim/src/replay/scenario.js';
import { checkScenarioFolder } from './scenario-check.js';

/**
 * `npm run record` and `npm run replay`'s checks, run as a user runs them (the scripts as child
 * processes): one clear line and exit 1 when the exchange is unreachable, and a scenario the
 * simulator can load when recording from a simulator on a free port.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let sim: RunningSimulator;
let work: string;

function run(script: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, script), ...args], { cwd: root, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A port nothing listens on: bound, then closed. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  sim = await startSimulator({ seed: 42, port: 0 });
  work = mkdtempSync(path.join(tmpdir(), 'pm-record-'));
});

afterAll(async () => {
  await sim?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('npm run record', () => {
  it('fails with one clear line and exit 1 when the exchange cannot be reached, writing nothing', async () => {
    const port = await closedPort();
    const out = path.join(work, 'unreachable');
    const r = await run('scripts/record.ts', ['--out', out, '--minutes', '0.01'], { GAMMA_URL: `http://127.0.0.1:${port}` });
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^record: cannot reach http://127\\.0\\.0\\.1:${port} \\(.+\\): check your internet connection or set GAMMA_URL$`));
    expect(existsSync(out)).toBe(false);
  });

  it('refuses a missing --out and a bad --minutes as usage errors (exit 2), naming what was wrong', async () => {
    const noOut = await run('scripts/record.ts', ['--minutes', '1']);
    expect(noOut.code).toBe(2);
    expect(noOut.stderr.split('\n')[0]).toBe('record: --out <folder> is required');
    expect(noOut.stderr).toContain('usage: npm run record -- --out <folder>');
    const bad = await run('scripts/record.ts', ['--out', path.join(work, 'x'), '--minutes', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.split('\n')[0]).toBe('record: --minutes must be a positive number, got "soon"');
  });

  it('records a scenario the simulator can replay from a simulator standing in for the exchange', { timeout: 60_000 }, async () => {
    const out = path.join(work, 'recorded');
    const r = await run('scripts/record.ts', ['--out', out, '--minutes', '0.05', '--events', '5', '--history', '3'], {
      GAMMA_URL: sim.httpUrl,
      CLOB_URL: sim.httpUrl,
      CLOB_WS_URL: sim.wsUrl,
      SPORTS_WS_URL: sim.wsUrl,
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/record: wrote .*: 5 events, \d+ tokens on 1 socket\(s\), 3 history files, \d+ market \+ \d+ sports frames/);

    const scenario = loadScenario(out);
    expect(scenario.catalog).toHaveLength(5);
    const served = (await (await fetch(`${sim.httpUrl}/events?active=true&closed=false&order=volume24hr&ascending=false&limit=5&offset=0`)).json()) as Array<{ id: string }>;
    expect(scenario.catalog.map((e) => String(e.id))).toEqual(served.map((e) => String(e.id)));
    expect(scenario.sports.length).toBeGreaterThan(0);

    const historyFiles = readdirSync(path.join(out, 'history'));
    expect(historyFiles).toHaveLength(3);
    for (const f of historyFiles) {
      const body = JSON.parse(readFileSync(path.join(out, 'history', f), 'utf8')) as { history: unknown[] };
      expect(body.history.length).toBeGreaterThan(0);
    }

    // Frames in order, from both channels; the first market frame is the initial dump of books
    // for the catalog's tokens.
    const tokens = new Set(scenario.catalog.flatMap((e) => e.markets.flatMap((m) => JSON.parse(m.clobTokenIds ?? '[]') as string[])));
    const market = scenario.feed.filter((l) => l.channel === 'market');
    expect(market.length).toBeGreaterThan(0);
    expect(scenario.feed.some((l) => l.channel === 'sports')).toBe(true);
    const dump = market[0]!.frame as Array<{ event_type: string; asset_id: string }>;
    expect(Array.isArray(dump)).toBe(true);
    expect(dump.every((b) => b.event_type === 'book' && tokens.has(b.asset_id))).toBe(true);
    const ats = scenario.feed.map((l) => l.at);
    expect(ats).toEqual([...ats].sort((a, b) => a - b));
    expect(ats[ats.length - 1]).toBeLessThanOrEqual(3_500);

    expect(checkScenarioFolder(out)).toBeNull();
  });
});

describe('npm run replay', () => {
  it('accepts the fixture scenario and refuses what is not a scenario, in one line with exit 1 (a bad option: exit 2)', async () => {
    expect(checkScenarioFolder(path.join(root, 'test/fixtures/scenario-basic'))).toBeNull();

    const missing = await run('scripts/replay.ts', [path.join(work, 'nope')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe(`replay: ${path.join(work, 'nope')} is not a folder`);

    const broken = path.join(work, 'broken');
    rmSync(broken, { recursive: true, force: true });
    mkdirSync(broken);
    writeFileSync(path.join(broken, 'catalog.json'), '[]');
    writeFileSync(path.join(broken, 'feed.jsonl'), '{"at": 0, "channel": "market", "frame": "PONG"}\n{"at": 5, "channel": "telepathy", "frame": 1}\n');
    const r = await run('scripts/replay.ts', [broken, '--speed', '4']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(`replay: ${path.join(broken, 'feed.jsonl')} line 2 is not {"at": ms, "channel": "market"|"sports", "frame": …}`);

    const noSpeed = await run('scripts/replay.ts', [broken, '--speed', '0']);
    expect(noSpeed.code).toBe(2);
    expect(noSpeed.stderr.split('\n')[0]).toBe('replay: --speed must be a positive number, got "0"');
  });
});
