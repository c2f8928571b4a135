import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

/**
 * The pages the API serves, in a real browser: Debian's Chromium driven by playwright-core (no
 * browser download), headless, with nothing of its own going to the network.
 */

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (apt-get install -y chromium), as .ci/run does`);
  }
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}

/** What a page did that it should not: requests outside `base`, uncaught errors, anything its Content-Security-Policy blocked. */
export interface PageProblems {
  foreign: string[];
  errors: string[];
  violations: string[];
}

/** Starts collecting a page's problems; call before its first navigation. */
export async function watchPage(page: Page, base: string): Promise<PageProblems> {
  const problems: PageProblems = { foreign: [], errors: [], violations: [] };
  page.on('request', (req) => {
    if (!req.url().startsWith(base) && !req.url().startsWith('data:')) problems.foreign.push(req.url());
  });
  page.on('pageerror', (err) => problems.errors.push(err.message));
  page.on('console', (message) => {
    if (/Content[ -]Security[ -]Policy/i.test(message.text())) problems.violations.push(message.text());
  });
  await page.addInitScript({
    content: "document.addEventListener('securitypolicyviolation', (e) => console.error('Content Security Policy violation: ' + e.violatedDirective + ' ' + e.blockedURI));",
  });
  return problems;
}
