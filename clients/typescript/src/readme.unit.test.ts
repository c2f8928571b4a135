import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

/**
 * The README's first example is examples/readme.ts, character for character: that file is
 * type-checked with the package, and the end-to-end docs test runs the README's block itself.
 */
it("shows examples/readme.ts as the README's first example", () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(block).toBe(readFileSync(new URL('../examples/readme.ts', import.meta.url), 'utf8'));
});
