/**
 * Seeded randomness for the synthetic exchange. Everything random in the simulator draws from an
 * `Rng` (mulberry32), never `Math.random`, so the same SIM_SEED gives the same catalog and the same
 * sequence of book moves.
 */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  range(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[this.int(0, items.length - 1)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }

  /** Standard normal (Box–Muller). */
  normal(): number {
    const u = Math.max(this.next(), 1e-12);
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** Poisson count with mean `lambda` (Knuth for small means, a rounded normal above). */
  poisson(lambda: number): number {
    if (lambda <= 0) return 0;
    if (lambda > 30) return Math.max(0, Math.round(lambda + Math.sqrt(lambda) * this.normal()));
    const limit = Math.exp(-lambda);
    let k = 0;
    let p = this.next();
    while (p > limit) {
      k += 1;
      p *= this.next();
    }
    return k;
  }

  /** A decimal string of exactly `n` digits, no leading zero (token ids are 76 of these). */
  digits(n: number): string {
    let out = String(this.int(1, 9));
    while (out.length < n) out += String(this.int(0, 9));
    return out;
  }

  hex(n: number): string {
    let out = '';
    while (out.length < n) out += this.int(0, 15).toString(16);
    return out;
  }

  /** An independent stream derived from this one's seed and a label. */
  fork(label: string): Rng {
    return new Rng(hash32(`${this.state}:${label}`));
  }
}

/** FNV-1a with a murmur3 finaliser: a stable 32-bit hash of a string. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Deterministic uniform in [-1, 1] for a key (value noise lattice). */
export function hashUnit(key: string): number {
  return (hash32(key) / 4294967295) * 2 - 1;
}
