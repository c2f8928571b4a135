/** Wall-clock time, injectable so tests can control it. */
export interface Clock {
  /** Unix ms. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
