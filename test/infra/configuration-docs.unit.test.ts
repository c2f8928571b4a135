import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { configSchema } from '@pm/shared/config';

/**
 * docs/configuration.md is the configuration's documentation, and the schema is its truth: every
 * variable of the schema has a row (with the schema's default where the row names one), no row names
 * a variable the schema lacks, and every variable the code reads anywhere is in one of the page's
 * tables. Adding, removing or re-defaulting a variable without the docs fails here.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const page = readFileSync(path.join(root, 'docs/configuration.md'), 'utf8');

/** The rows of the table under each `## ` heading: variable name → its cells. */
function tables(markdown: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current: Map<string, string[]> | undefined;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('## ')) sections.set(line.slice(3).trim(), (current = new Map()));
    const row = /^\| `([A-Z][A-Z0-9_]*)` \|(.*)\|$/.exec(line);
    if (row && current) current.set(row[1]!, row[2]!.split(' | ').map((c) => c.trim()));
  }
  return sections;
}

const sections = tables(page);
const serviceRows = sections.get('Service configuration') ?? new Map<string, string[]>();
const documented = new Set([...sections.values()].flatMap((rows) => [...rows.keys()]));
const schemaKeys = Object.keys(configSchema.shape).sort();

/** Names read from the environment by the code: `process.env.X`, `process.env['X']`, and the run line's `env.X`. */
function variablesRead(): Set<string> {
  const found = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) {
        const text = readFileSync(full, 'utf8');
        for (const m of text.matchAll(/process\.env(?:\.([A-Z][A-Z0-9_]+)|\[['"]([A-Z][A-Z0-9_]+)['"]\])|\b(?:baseEnv|env)\.([A-Z][A-Z0-9_]{2,})\b/g)) {
          found.add((m[1] ?? m[2] ?? m[3])!);
        }
      }
    }
  };
  for (const dir of ['shared/src', 'services', 'scripts', 'test']) walk(path.join(root, dir));
  return found;
}

/** The operating system's own, not the service's. */
const SYSTEM = new Set(['PATH', 'HOME', 'XDG_RUNTIME_DIR']);

describe('docs/configuration.md', () => {
  it('has a row for every variable of the schema, and none for a variable it lacks', () => {
    expect([...serviceRows.keys()].sort()).toEqual(schemaKeys);
  });

  it("states the schema's default wherever a row names one value", () => {
    const defaults = configSchema.parse({}) as Record<string, unknown>;
    for (const [name, [shown]] of serviceRows) {
      const single = /^`([^`]*)`$/.exec(shown ?? '');
      if (single) expect(single[1], name).toBe(String(defaults[name]));
      else expect(defaults[name], `${name}: the page says "${shown}", the schema has a default`).toBeUndefined();
    }
  });

  it('lists every variable the code reads', () => {
    const missing = [...variablesRead()].filter((name) => !documented.has(name) && !SYSTEM.has(name)).sort();
    expect(missing).toEqual([]);
  });

  it('keeps the run line and test variables out of the schema table and the schema out of theirs', () => {
    for (const [title, rows] of sections) {
      if (title === 'Service configuration') continue;
      for (const name of rows.keys()) expect(schemaKeys, `${name} (under "${title}")`).not.toContain(name);
    }
  });
});
