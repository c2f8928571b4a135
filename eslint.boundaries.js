// The architecture's boundaries as lint rules (docs/conventions.md "Layout tells the architecture"), with
// eslint's own no-restricted-imports: it matches import specifiers, needs no resolver, and so costs
// nothing on the two shared cores. Each rule below is planted and seen to fail in
// test/infra/boundaries.int.test.ts.
//
// no-restricted-imports options do not merge across config objects (the last one matching a file
// wins), so every block below carries all the restrictions of the files it matches.

const SERVICES = ['api', 'worker', 'ingestor', 'exchange-sim'];

/** Modules that do I/O (or hold a connection): none of them may be loaded by the pure domain. */
const IO_MODULES = /^(node:.*|fs|fs\/.*|net|http|https|http2|tls|dgram|dns|child_process|cluster|worker_threads|os|pg|pg-.*|@databases\/.*|ioredis|bullmq|ws|express|fastify|pino|prom-client|undici)$/.source;

/** The Postgres client and connection layer. */
const PG = /^(pg|pg-.*|@databases\/.*)$/.source;
const BULLMQ = /^bullmq$/.source;
/** shared/ areas that load pg or BullMQ (the db layer, the write path, queues, the outbox). */
const HEAVY_SHARED_ENTRY = /^@pm\/shared\/(db|history|records|queues|outbox|archive|archive\/write)$/.source;
const HEAVY_SHARED_RELATIVE = /^\.\.?\/(.*\/)?(db|records|queues)(\/.*)?$|^\.\.?\/(.*\/)?outbox\.js$/.source;

/** A file inside shared/src reached by a relative path from outside shared (entry points only). */
const SHARED_DEEP = [
  { regex: /(^|\/)shared\/src(\/|$)/.source, message: 'Import shared through its entry points (@pm/shared/<area>), not its files.' },
  { regex: /^@pm\/shared(\/.*)?\/src(\/|$)|^@pm\/shared$/.source, message: 'Import shared through one of its entry points (@pm/shared/<area>, see shared/package.json "exports").' },
];

/** Any other service, by package name or by relative path. */
function otherServices(self) {
  const others = SERVICES.filter((s) => s !== self).join('|');
  return [
    { regex: `^@pm/(${others})(/.*)?$`, message: 'A service never imports another service: share it through shared/.' },
    { regex: `^(\\.\\./)+(services/)?(${others})/`, message: 'A service never imports another service: share it through shared/.' },
  ];
}

const restrict = (patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });

const notDomainIo = { regex: IO_MODULES, message: 'shared/src/domain is pure: no I/O modules (docs/conventions.md "Domain logic is pure").' };
const notOutsideDomain = { regex: /^\.\.\//.source, message: 'shared/src/domain imports only domain: what it needs from elsewhere belongs in it.' };
const notPgInLight = { regex: PG, message: 'This shared area is loaded by the API, which never loads pg: Postgres belongs in @pm/shared/db.' };
const notBullInLight = { regex: BULLMQ, message: 'This shared area is loaded by the API, which never loads BullMQ: queues belong in @pm/shared/queues.' };
const notHeavyInLight = { regex: HEAVY_SHARED_RELATIVE, message: 'This shared area is loaded by the API: it must not reach db, records, queues or the outbox (they load pg or BullMQ).' };
const apiNoPg = { regex: PG, message: 'The API never loads pg, except for keyset pages in services/api/src/pages/ (read-only).' };
const apiNoHeavy = { regex: HEAVY_SHARED_ENTRY, message: 'The API never loads pg or BullMQ: @pm/shared/db, @pm/shared/history and @pm/shared/archive only from services/api/src/pages/; records, queues, outbox and the archive\'s writer never.' };
const apiNoBull = { regex: BULLMQ, message: 'The API never loads BullMQ.' };
const pagesNoWrite = { regex: /^@pm\/shared\/(records|queues|outbox|archive\/write)$/.source, message: 'services/api/src/pages reads Postgres only: no write path, queues or outbox.' };
const scriptsPublicOnly = [
  { regex: /(^|\/)services\//.source, message: "Scripts use public entry points only (@pm/shared/<area>, a queue's job), never a service's internals." },
  { regex: `^@pm/(${SERVICES.join('|')})(/.*)?$`, message: "Scripts use public entry points only (@pm/shared/<area>, a queue's job), never a service's internals." },
];

/** The areas of shared/src the API may load (directly or through another of them). */
const LIGHT_SHARED = ['api', 'redis', 'ops', 'exchange'].map((a) => `shared/src/${a}/**/*.ts`).concat(
  ['config', 'logger', 'metrics', 'net', 'snapshots', 'wait'].map((f) => `shared/src/${f}.ts`),
);

export const boundaries = [
  // The domain: pure, and self-contained (tests included: a pure test needs no I/O either).
  { files: ['shared/src/domain/**/*.ts'], rules: restrict([notDomainIo, notOutsideDomain]) },
  // The shared areas the API loads stay free of pg and BullMQ, so "the API never loads pg" holds
  // through them too, not only for its own imports. Their tests may seed with anything.
  { files: LIGHT_SHARED, ignores: ['**/*.test.ts'], rules: restrict([notPgInLight, notBullInLight, notHeavyInLight]) },
  // The API: no pg, no BullMQ, no other service; keyset pages are the one read-only way to Postgres.
  {
    files: ['services/api/**/*.ts'],
    ignores: ['services/api/src/pages/**'],
    rules: restrict([apiNoPg, apiNoHeavy, apiNoBull, ...otherServices('api'), ...SHARED_DEEP]),
  },
  { files: ['services/api/src/pages/**/*.ts'], rules: restrict([apiNoBull, pagesNoWrite, ...otherServices('api'), ...SHARED_DEEP]) },
  // Tests of the API may seed Postgres; they still never import another service.
  { files: ['services/api/**/*.test.ts', 'services/api/src/testing/**/*.ts'], rules: restrict([...otherServices('api'), ...SHARED_DEEP]) },
  ...SERVICES.filter((s) => s !== 'api').map((s) => ({ files: [`services/${s}/**/*.ts`], rules: restrict([...otherServices(s), ...SHARED_DEEP]) })),
  // Scripts (not their tests) use public entry points only.
  { files: ['scripts/**/*.ts'], ignores: ['**/*.test.ts'], rules: restrict([...scriptsPublicOnly, ...SHARED_DEEP]) },
];
