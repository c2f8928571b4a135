/**
 * Short, plausible reasoning for the crowd's calls and updates, built from the market and the pick.
 */
export type Random = () => number;

export const pick = <T>(random: Random, items: readonly T[]): T => {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
};

const REASONS = [
  'The price has not caught up with the last hour.',
  'Form says one thing, the book says another; I side with form.',
  'Too much money chasing the other side.',
  'Base rates favour this more than people think.',
  'Momentum is real here and the market is slow.',
  'Small edge, but an edge.',
  'The line moved for no good reason.',
  'Everyone I read disagrees, which is usually a good sign.',
  'Numbers first: this is underpriced.',
  'Gut call, I admit it.',
];

const UPDATES = [
  'Still holding. Nothing has changed my mind.',
  'The move since my call looks like noise.',
  'Less sure than this morning, but staying in.',
  'News today backs this up.',
  'Price drifted against me; the reasoning still stands.',
  'Adding conviction after watching the last stretch.',
];

export function thesisFor(random: Random, outcome: string, chance: number): string {
  const pct = Math.round(chance * 100);
  const lead = chance < 0.35 ? `${outcome} at ${pct}% is a long shot worth taking.` : chance > 0.65 ? `${outcome} at ${pct}% is still too cheap.` : `${outcome} at ${pct}% is a coin flip I like.`;
  return `${lead} ${pick(random, REASONS)}`;
}

export function fadeThesis(random: Random, handle: string, outcome: string): string {
  return `Fading @${handle}: ${outcome} is the better side. ${pick(random, REASONS)}`;
}

export function copyThesis(random: Random, handle: string): string {
  return `Tailing @${handle}. ${pick(random, REASONS)}`;
}

export function updateFor(random: Random): string {
  return pick(random, UPDATES);
}
