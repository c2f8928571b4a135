import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { endpointList, STREAM_PATH, streamQueryParams } from '@pm/shared/api';

/**
 * The repository's documents stay readable by a stranger who clones it: the README is short, every
 * table renders whole (a line between two rows splits a table, and a row with another number of cells
 * is drawn broken), every relative link reaches a file the repository holds, and no document points
 * at one it does not hold or narrates the project's history instead of its current truth.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function markdownFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.') || entry.name === 'dist' || entry.name === 'test-results') continue;
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.md')) found.push(rel);
    }
  };
  walk('.');
  return found.map((f) => path.normalize(f)).sort();
}

const files = markdownFiles();
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

/** A table row's cells, split on pipes that are not escaped. */
const cells = (line: string) => line.trim().split(/(?<!\\)\|/).slice(1, -1);

/** Lines outside fenced code blocks, with their numbers. */
function prose(text: string): Array<{ line: string; n: number }> {
  let fenced = false;
  const out: Array<{ line: string; n: number }> = [];
  text.split('\n').forEach((line, i) => {
    if (line.startsWith('```')) fenced = !fenced;
    else if (!fenced) out.push({ line, n: i + 1 });
  });
  return out;
}

describe('the repository documents', () => {
  it('finds them', () => {
    expect(files).toContain('README.md');
    expect(files).toContain(path.normalize('docs/api.md'));
  });

  it('keep the README within 200 lines', () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(200);
  });

  it.each(files)('%s: every table is whole', (file) => {
    const problems: string[] = [];
    const lines = prose(read(file));
    for (let i = 0; i < lines.length; i++) {
      if (!lines[i]!.line.startsWith('|') || (i > 0 && lines[i - 1]!.line.startsWith('|'))) continue;
      const width = cells(lines[i]!.line).length;
      if (!/^\|(\s*:?-+:?\s*\|)+$/.test(lines[i + 1]?.line ?? '')) problems.push(`line ${lines[i]!.n}: a table without its header separator`);
      for (let j = i; j < lines.length && lines[j]!.line.startsWith('|'); j++) {
        const n = cells(lines[j]!.line).length;
        if (n !== width) problems.push(`line ${lines[j]!.n}: ${n} cells where the header has ${width}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it.each(files)('%s: every relative link reaches a file', (file) => {
    const broken = [...read(file).matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)]
      .map((m) => m[1]!)
      .filter((target) => !/^[a-z]+:/.test(target) && !existsSync(path.join(root, path.dirname(file), target)));
    expect(broken).toEqual([]);
  });

  it.each(files)('%s: names no document the repository lacks, and no history', (file) => {
    const text = read(file);
    const found = [
      ...[...text.matchAll(/\b(?:SPEC|DESIGN|PROTOCOL|CONVENTIONS|SCALING)\.md\b/g)].map((m) => m[0]),
      ...[...text.matchAll(/\bissue \d+|\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|this|\d+(?:st|nd|rd|th)) session\b|\bre-measured\b/gi)].map((m) => m[0]),
    ];
    expect(found).toEqual([]);
  });
});

describe('docs/api.md', () => {
  const api = read('docs/api.md');
  const stream = read('docs/stream.md');

  it.each(endpointList.map((e) => [e.path, e] as const))('documents %s and each of its parameters', (_path, endpoint) => {
    expect(api).toContain(`### GET ${endpoint.path}`);
    const section = api.slice(api.indexOf(`### GET ${endpoint.path} `));
    const own = section.slice(0, section.indexOf('\n### ', 1) === -1 ? undefined : section.indexOf('\n### ', 1));
    for (const name of Object.keys(endpoint.params.shape)) expect(own, `${endpoint.path} ${name}`).toContain(`\`${name}\``);
  });

  it('documents the stream and its parameters', () => {
    expect(api).toContain(`### GET ${STREAM_PATH}`);
    for (const { name } of streamQueryParams) expect(stream).toContain(`\`${name}\``);
  });
});
