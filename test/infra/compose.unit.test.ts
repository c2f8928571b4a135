import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { configSchema, parseConfig } from '@pm/shared/config';
import { NODE_ARGS } from '../../scripts/lib/node-args.js';
import { builtEntry, sourceEntry } from '../../scripts/lib/build.js';

/**
 * No Docker engine runs here, so the compose file and the Dockerfile are checked statically: every
 * service is there, every variable is a real configuration key with a valid value, every published
 * port and health check is the service's configured port, every URL points at a compose service on
 * its port, and the image carries every workspace.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

const serviceSchema = z.object({
  image: z.string().optional(),
  build: z.unknown().optional(),
  command: z.array(z.string()).optional(),
  environment: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  ports: z.array(z.string()).optional(),
  healthcheck: z.object({ test: z.array(z.string()) }).optional(),
  depends_on: z.record(z.string(), z.object({ condition: z.enum(['service_started', 'service_healthy', 'service_completed_successfully']) })).optional(),
  volumes: z.array(z.string()).optional(),
  profiles: z.array(z.string()).optional(),
  network_mode: z.string().optional(),
});
const composeSchema = z.object({ services: z.record(z.string(), serviceSchema), volumes: z.record(z.string(), z.unknown()).optional() });

const compose = composeSchema.parse(parse(read('docker-compose.yml'), { merge: true }));
const services = compose.services;

/** Our four processes and the config key holding the port each one listens on. */
const APP_PORT_KEY = { api: 'PORT', ingestor: 'INGESTOR_PORT', worker: 'WORKER_PORT', 'exchange-sim': 'SIM_PORT' } as const;
type AppService = keyof typeof APP_PORT_KEY;
const APP_SERVICES = Object.keys(APP_PORT_KEY) as AppService[];

/** The cluster profile's variables (infra/compose/cluster.env), as `docker compose --env-file` reads them. */
const CLUSTER_ENV = Object.fromEntries(
  read('infra/compose/cluster.env')
    .split('\n')
    .filter((l) => /^[A-Z_]+=/.test(l))
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const),
);

/** A service's environment with `${VAR:-default}` resolved as compose does, from `vars` (default: none set). */
function envOf(name: string, vars: Record<string, string> = {}): Record<string, string> {
  const interpolate = (v: string) => v.replace(/\$\{(\w+):-([^}]*)\}/g, (_, key: string, fallback: string) => vars[key] ?? fallback);
  return Object.fromEntries(Object.entries(services[name]?.environment ?? {}).map(([k, v]) => [k, interpolate(String(v))]));
}

function portOf(name: AppService): number {
  return parseConfig(envOf(name))[APP_PORT_KEY[name]];
}

describe('docker-compose.yml', () => {
  it('runs the whole stack, the demo crowd included', () => {
    expect(Object.keys(services).filter((name) => services[name]!.profiles === undefined).sort()).toEqual(
      ['api', 'crowd', 'exchange-sim', 'grafana', 'ingestor', 'postgres', 'prometheus', 'redis', 'worker'].sort(),
    );
    // The simulator's control API answers only on loopback: the crowd shares its network namespace and token.
    expect(services['crowd']!.network_mode).toBe('service:exchange-sim');
    expect(envOf('crowd').SIM_CONTROL_TOKEN).toBe(envOf('exchange-sim').SIM_CONTROL_TOKEN);
    expect(services['crowd']!.command?.at(-1)).toBe('scripts/crowd.ts');
  });

  it('has a cluster profile in the shape of `npm start -- --cluster`: 3 Redis masters, two of each service, on the cluster', () => {
    const inProfile = Object.keys(services).filter((name) => services[name]!.profiles?.includes('cluster')).sort();
    expect(inProfile).toEqual(['api-2', 'ingestor-2', 'redis-cluster-init', 'redis-node-1', 'redis-node-2', 'redis-node-3', 'worker-2']);
    expect(CLUSTER_ENV.COMPOSE_PROFILES).toBe('cluster');
    const nodes = [1, 2, 3].map((n) => `redis-node-${n}:${6999 + n}`);
    expect(CLUSTER_ENV.REDIS_URL).toBe(`redis+cluster://${nodes.join(',')}`);
    for (const n of [1, 2, 3]) expect(services[`redis-node-${n}`]!.command?.join(' ')).toContain(`--port ${6999 + n} --cluster-enabled yes`);
    expect(services['redis-cluster-init']!.command?.join(' ')).toContain('--cluster create');
    for (const name of ['api', 'api-2', 'worker', 'worker-2', 'ingestor', 'ingestor-2', 'crowd']) {
      const config = parseConfig(envOf(name, CLUSTER_ENV));
      expect(config.REDIS_URL, name).toBe(CLUSTER_ENV.REDIS_URL);
      if (name.startsWith('ingestor')) expect(config.INGESTOR_LEASES, name).toBe(true);
    }
    expect(services['api-2']!.ports).toEqual(['3100:3000']);
    // Without the env file, one Redis and one ingestor serving everything.
    expect(parseConfig(envOf('ingestor')).INGESTOR_LEASES).toBe(false);
  });

  it('builds our four processes from the one Dockerfile, each with its own entry point', () => {
    for (const name of APP_SERVICES) {
      const s = services[name]!;
      expect(s.build, name).toBe('.');
      // The image runs the bundle its Dockerfile builds (npm run build) from the service's sources.
      expect(s.command?.at(-1), name).toBe(builtEntry(name));
      expect(existsSync(path.join(root, sourceEntry(name))), sourceEntry(name)).toBe(true);
    }
    expect(read('Dockerfile')).toMatch(/^RUN npm run build$/m);
  });

  it('starts every process with the V8 heap options `npm start` gives it (scripts/lib/node-args.ts)', () => {
    const command = ['node', ...NODE_ARGS.api, builtEntry('api')];
    for (const name of ['api', 'api-2']) expect(services[name]!.command, name).toEqual(command);
    const cmd = /^CMD (\[.*\])$/m.exec(read('Dockerfile'))?.[1];
    expect(cmd && JSON.parse(cmd)).toEqual(command);
    for (const name of ['ingestor', 'worker', 'exchange-sim'] as const) {
      const expected = ['node', ...NODE_ARGS[name], builtEntry(name)];
      for (const s of [name, `${name}-2`]) if (services[s]) expect(services[s].command, s).toEqual(expected);
    }
    expect(services['crowd']!.command).toEqual(['node', ...NODE_ARGS.crowd, '--import', 'tsx', 'scripts/crowd.ts']);
  });

  it('sets only real configuration variables, every one valid', () => {
    const keys = new Set(Object.keys(configSchema.shape));
    for (const name of APP_SERVICES) {
      const env = envOf(name);
      for (const key of Object.keys(env)) expect(keys.has(key), `${name}: ${key} is not in shared/src/config.ts`).toBe(true);
      expect(() => parseConfig(env), name).not.toThrow();
    }
  });

  it('points every URL at a compose service on the port that service listens on', () => {
    const listening: Record<string, number> = { postgres: 5432, redis: 6379 };
    for (const name of APP_SERVICES) listening[name] = portOf(name);
    for (const name of APP_SERVICES) {
      const config = parseConfig(envOf(name));
      for (const key of ['DATABASE_URL', 'REDIS_URL', 'GAMMA_URL', 'CLOB_URL', 'CLOB_WS_URL', 'SPORTS_WS_URL'] as const) {
        const url = new URL(config[key]);
        expect(Object.keys(services), `${name}: ${key} host ${url.hostname}`).toContain(url.hostname);
        expect(Number(url.port), `${name}: ${key} port`).toBe(listening[url.hostname]);
      }
    }
  });

  it('publishes and health-checks each service on its configured port', () => {
    for (const name of APP_SERVICES) {
      const port = portOf(name);
      for (const mapping of services[name]!.ports ?? []) {
        expect(Number(mapping.split(':').at(-1)), `${name} publishes ${mapping}`).toBe(port);
      }
      const test = services[name]!.healthcheck?.test.join(' ') ?? '';
      // The simulator's controls are loopback-and-token only, so its probe is a public exchange route.
      const path = name === 'exchange-sim' ? '/sports' : '/readyz';
      expect(test, `${name} health check`).toContain(`http://127.0.0.1:${port}${path}`);
    }
    expect(services['api']!.ports).toEqual(['3000:3000']);
  });

  it('opens the ingestor and worker ops ports to the other containers, so Prometheus can scrape them', () => {
    // OPS_HOST defaults to loopback (shared/src/config.ts): outside a container nobody else should reach them.
    expect(parseConfig({}).OPS_HOST).toBe('127.0.0.1');
    for (const name of ['ingestor', 'worker']) expect(parseConfig(envOf(name)).OPS_HOST, name).toBe('0.0.0.0');
  });

  it('depends only on services that exist, and the API waits for a ready worker', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const dep of Object.keys(s.depends_on ?? {})) expect(Object.keys(services), `${name} depends on ${dep}`).toContain(dep);
    }
    expect(services['api']!.depends_on?.['worker']?.condition).toBe('service_healthy');
    expect(services['ingestor']!.depends_on?.['postgres']?.condition).toBe('service_healthy');
  });

  it('mounts the infra files that exist', () => {
    for (const name of ['prometheus', 'grafana']) {
      for (const volume of services[name]!.volumes ?? []) {
        const source = volume.split(':')[0]!;
        expect(existsSync(path.join(root, source)), `${name} mounts ${source}`).toBe(true);
      }
    }
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const copies = dockerfile
    .split('\n')
    .filter((l) => l.startsWith('COPY '))
    .flatMap((l) => l.slice(5).trim().split(/\s+/).slice(0, -1));

  it('copies every workspace package.json before npm ci, so the install layer is cached', () => {
    const rootPkg = z.object({ workspaces: z.array(z.string()) }).parse(JSON.parse(read('package.json')));
    const workspaces = rootPkg.workspaces.flatMap((w) =>
      w.endsWith('/*') ? readdirSync(path.join(root, w.slice(0, -2))).map((d) => `${w.slice(0, -2)}/${d}`) : [w],
    );
    const manifests = workspaces.map((w) => `${w}/package.json`).filter((f) => existsSync(path.join(root, f)));
    expect(manifests.length).toBeGreaterThanOrEqual(6);
    const ciLine = dockerfile.split('\n').findIndex((l) => l.includes('npm ci'));
    const copiedBeforeCi = dockerfile
      .split('\n')
      .slice(0, ciLine)
      .filter((l) => l.startsWith('COPY '))
      .flatMap((l) => l.slice(5).trim().split(/\s+/).slice(0, -1));
    for (const manifest of ['package.json', 'package-lock.json', ...manifests]) expect(copiedBeforeCi, manifest).toContain(manifest);
  });

  it('copies the sources every service runs from', () => {
    for (const dir of ['shared', 'services', 'scripts']) expect(copies).toContain(dir);
  });
});
