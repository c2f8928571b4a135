/**
 * `npm run build`: bundles each service into `services/<name>/dist/main.mjs` (scripts/lib/build.ts),
 * what the run line and the Docker image run. The run line builds before it starts anything, so
 * this is for images and for running one service by hand: `node services/api/dist/main.mjs`.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCli } from './lib/cli.js';
import { buildServices, builtEntry, SERVICE_NAMES } from './lib/build.js';

const USAGE = `usage: npm run build

Bundles each service (${SERVICE_NAMES.join(', ')}) with the shared library into
services/<name>/dist/main.mjs, npm packages left as imports; each with a linked source map.

options:
  -h, --help  this text`;

parseCli({ command: 'build', usage: USAGE, options: {} });
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { ms } = await buildServices(root);
for (const name of SERVICE_NAMES) process.stdout.write(`built ${builtEntry(name)}\n`);
process.stdout.write(`in ${ms} ms\n`);
