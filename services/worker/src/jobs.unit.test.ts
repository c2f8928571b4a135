import { describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createLogger } from '@pm/shared/logger';
import { missingProcessors, startQueueWorkers, type ProcessorRegistry } from './jobs.js';

const logger = createLogger('worker-test', { LOG_LEVEL: 'silent' });

describe('the job registry', () => {
  it('names every consumed job without a processor', () => {
    expect(missingProcessors({ snapshots: {}, records: {} }, ['snapshots', 'records'])).toEqual(['snapshots/build-snapshots', 'records/build-record-snapshots']);
    expect(missingProcessors({}, ['snapshots', 'records', 'projections'])).toEqual([
      'snapshots/build-snapshots',
      'records/build-record-snapshots',
      'projections/project-users',
      'projections/rebuild-all',
      'projections/window-upkeep',
    ]);
    expect(
      missingProcessors({ snapshots: { 'build-snapshots': 'not a function' }, records: { 'build-record-snapshots': async () => {} } }, ['snapshots', 'records']),
    ).toEqual(['snapshots/build-snapshots']);
  });

  it('is complete when every consumed job has a processor', () => {
    expect(
      missingProcessors({ snapshots: { 'build-snapshots': async () => {} }, records: { 'build-record-snapshots': async () => {} } }, ['snapshots', 'records']),
    ).toEqual([]);
  });

  it('refuses to start a worker with a job that has no processor', () => {
    // A registry that only type-checks through a cast, as an untyped caller could pass it.
    const registry = { snapshots: {} } as unknown as ProcessorRegistry;
    // The check runs before any connection is touched.
    const connection = {} as unknown as Redis;
    expect(() =>
      startQueueWorkers({ registry, consume: [{ queue: 'snapshots', concurrency: 1 }], connection, prefix: 'unit', logger }),
    ).toThrow('refusing to start: no processor for snapshots/build-snapshots');
  });
});
