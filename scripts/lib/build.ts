import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build, stop, type Plugin } from 'esbuild';

/**
 * The services as they run (`npm run build`, and the run line before it starts them): each one's
 * TypeScript, with the workspace's shared library, bundled into one ES module at
 * `services/<name>/dist/main.mjs`; npm packages stay imports, resolved from node_modules as usual.
 *
 * Why not run the sources through tsx as the tests do: its loader keeps a module-hooks thread and a
 * copy of every transformed file in each process — about 15 MB of RSS an API process at rest, a
 * tenth of its budget (SPEC/issue "API RSS ≤ 150 MB") — and re-transforms everything at each start.
 * The bundle starts in a few hundred milliseconds. Its linked source map is written beside it, for
 * `NODE_OPTIONS=--enable-source-maps` when a stack trace should name the TypeScript (not on by
 * default: scripts/lib/supervisor.ts says why).
 */

export const SERVICE_NAMES = ['api', 'ingestor', 'worker', 'exchange-sim'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/** The source entry point of a service. */
export function sourceEntry(name: ServiceName): string {
  return `services/${name}/src/main.ts`;
}

/** The built entry point of a service, relative to the project root. */
export function builtEntry(name: ServiceName): string {
  return `services/${name}/dist/main.mjs`;
}

/** The schema migrations the services apply at start (shared/src/db/migrate.ts reads them next to its module). */
const MIGRATIONS = 'shared/src/db/migrations';

/** Bare imports other than the workspace's own packages (`@pm/…`, TypeScript sources) stay imports. */
const npmPackagesExternal: Plugin = {
  name: 'npm-packages-external',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('@pm/') ? undefined : { path: args.path, external: true }));
  },
};

/** Writes under a temporary name and renames into place: a reader sees the old file or the new, whole. */
function replace(file: string, contents: Uint8Array): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, file);
}

/**
 * Builds every service. Each file is replaced whole (`replace`), so a process starting meanwhile
 * (another run line, a test's stack) reads a whole bundle, old or new.
 */
export async function buildServices(root: string): Promise<{ ms: number }> {
  const started = performance.now();
  await Promise.all(
    SERVICE_NAMES.map(async (name) => {
      const outfile = path.join(root, builtEntry(name));
      const result = await build({
        absWorkingDir: root,
        entryPoints: [sourceEntry(name)],
        outfile,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node24',
        sourcemap: 'linked',
        plugins: [npmPackagesExternal],
        write: false,
        logLevel: 'warning',
      });
      const dist = path.dirname(outfile);
      mkdirSync(path.join(dist, 'migrations'), { recursive: true });
      // migrate.ts finds its SQL files beside the module that holds it: here, beside the bundle.
      for (const sql of readdirSync(path.join(root, MIGRATIONS))) {
        replace(path.join(dist, 'migrations', sql), readFileSync(path.join(root, MIGRATIONS, sql)));
      }
      // The map before the bundle: a process that sees the new bundle finds its map.
      const files = [...result.outputFiles].sort((a, b) => Number(b.path.endsWith('.map')) - Number(a.path.endsWith('.map')));
      for (const file of files) replace(file.path, file.contents);
    }),
  );
  // esbuild's compiler process would otherwise stay beside the run line for the rest of its life.
  await stop();
  return { ms: Math.round(performance.now() - started) };
}
