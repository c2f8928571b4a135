import { z } from 'zod';

/** Field rules the API's resources and responses share, defined once. */

/** Every success body says `ok: true`. */
export const ok = z.literal(true);
/** A count, an index or a tally: a whole number, never negative. */
export const count = z.number().int().min(0);
