import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * A short url-safe public id (calls and combos appear in links): 10 base62 characters, about 59
 * bits. Rejection sampling keeps every character equally likely (256 is not a multiple of 62).
 */
export function newPublicId(length = 10): string {
  let id = '';
  while (id.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte >= 248) continue; // 248 = 4 × 62: above it the alphabet would be skewed
      id += ALPHABET[byte % 62];
      if (id.length === length) break;
    }
  }
  return id;
}
