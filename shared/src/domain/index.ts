/**
 * Pure domain logic (docs/conventions.md "Domain logic is pure"): odds, money and XP, order books, the
 * display-chance rule and category mapping. Nothing here does I/O.
 */
export * from './rounding.js';
export * from './odds.js';
export * from './money.js';
export * from './orderbook.js';
export * from './display-chance.js';
export * from './categories.js';
export * from './records.js';
export * from './quote.js';
export * from './skill.js';
