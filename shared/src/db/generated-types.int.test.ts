import { describe, expect, it } from 'vitest';
import { staleTypeFiles } from './generate-types.js';

describe('generated table types', () => {
  it('match the migrations (run `npm run db:types` after changing a migration)', async () => {
    expect(await staleTypeFiles()).toEqual([]);
  });
});
