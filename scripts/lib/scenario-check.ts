import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * A quick check that a folder is a scenario (docs/protocol.md §5) before the whole stack is started on
 * it: catalog.json holds a JSON array and feed.jsonl exists with JSON lines of `{at, channel,
 * frame}`. Returns what is wrong, in one line, or null. The simulator validates the rest on load.
 */
export function checkScenarioFolder(folder: string): string | null {
  if (!existsSync(folder) || !statSync(folder).isDirectory()) return `${folder} is not a folder`;
  const catalogPath = path.join(folder, 'catalog.json');
  if (!existsSync(catalogPath)) return `${folder} has no catalog.json: not a scenario folder (make one with npm run record)`;
  try {
    if (!Array.isArray(JSON.parse(readFileSync(catalogPath, 'utf8')))) return `${catalogPath} is not a JSON array of events`;
  } catch (err) {
    return `${catalogPath} is not valid JSON (${err instanceof Error ? err.message : String(err)})`;
  }
  const feedPath = path.join(folder, 'feed.jsonl');
  if (!existsSync(feedPath)) return `${folder} has no feed.jsonl: not a scenario folder (make one with npm run record)`;
  const lines = readFileSync(feedPath, 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]?.trim();
    if (!line) continue;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      return `${feedPath} line ${i + 1} is not JSON`;
    }
    const l = json as { at?: unknown; channel?: unknown };
    if (typeof json !== 'object' || json === null || typeof l.at !== 'number' || (l.channel !== 'market' && l.channel !== 'sports') || !('frame' in json)) {
      return `${feedPath} line ${i + 1} is not {"at": ms, "channel": "market"|"sports", "frame": …}`;
    }
  }
  return null;
}
