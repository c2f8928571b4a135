import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { generateSchemaTypes } from '../generate.js';

/** The client's committed types are the ones generated from the committed openapi.json. */
it('has types generated from the committed openapi.json', async () => {
  const document = JSON.parse(readFileSync(new URL('../../../openapi.json', import.meta.url), 'utf8')) as object;
  const committed = readFileSync(new URL('./schema.d.ts', import.meta.url), 'utf8');
  if ((await generateSchemaTypes(document)) !== committed) {
    expect.fail('clients/typescript/src/schema.d.ts is not generated from openapi.json: run `npm run openapi` and commit both files');
  }
});
