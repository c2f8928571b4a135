import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ARCHIVE_DATASETS, datasetsMarkdown, withDatasetsSection } from '@pm/shared/archive';

/**
 * docs/archive.md's dataset tables are the archive's one definition of its columns
 * (shared/src/archive/datasets.ts), as `npm run openapi` writes them: a column added, renamed or
 * retyped without running it fails here, so a reader never trusts a stale schema.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const doc = readFileSync(path.join(root, 'docs/archive.md'), 'utf8');

describe('docs/archive.md', () => {
  it('holds the dataset tables exactly as the definitions make them (`npm run openapi` rewrites them)', () => {
    expect(doc).toBe(withDatasetsSection(doc));
    expect(doc).toContain(datasetsMarkdown());
  });

  it.each(Object.values(ARCHIVE_DATASETS).map((d) => [d.name, d] as const))('lists every column of %s with its type', (_name, dataset) => {
    const section = doc.slice(doc.indexOf(`### \`${dataset.name}\``));
    for (const c of dataset.columns) expect(section).toMatch(new RegExp(`\\| \`${c.name}\` \\| [^|]+ \\| (yes|no) \\|`));
  });
});
