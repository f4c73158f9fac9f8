// RetentionStore.neededRuns on both backends: a dataset example's latest run and every run an
// experiment started are kept, also when the example's input holds U+0000 and a look-alike key
// placed before the real one (PostgreSQL reads the records' text: a look-alike may only keep more).

import { after, describe, it } from 'node:test';
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DiskReserve } from '../../src/core/disk/reserve.js';
import type { ExampleRecord } from '../../src/automation/datasets/types.js';
import type { ExperimentRecord } from '../../src/automation/experiments/types.js';
import { migrate } from '../../src/automation/pg/migrations.js';
import { PgDatabase } from '../../src/automation/pg/pool.js';
import { openPgStores } from '../../src/automation/pg/stores/index.js';
import { openLmdbStores, type AutomationStores } from '../../src/automation/stores.js';
import { postgresSkip, startPostgres, type PostgresServer } from '../helpers/postgres.js';

const example: ExampleRecord = {
  id: 'ex_1',
  tenant: 't1',
  automationId: 'auto_1',
  automationType: 'workflow',
  name: 'nul inside',
  input: { text: 'a\u0000b', nested: { latestRunId: 'run_lookalike' } },
  expected: null,
  metadata: null,
  annotation: null,
  rowOrder: 0,
  overrides: null,
  latestRunId: 'run_latest',
  createdAt: new Date(0).toISOString(),
  updatedAt: new Date(0).toISOString(),
  files: { input: {}, expected: {} },
};

const experiment: ExperimentRecord = {
  id: 'exp_1',
  tenant: 't1',
  automationId: 'auto_1',
  automationType: 'workflow',
  status: 'completed',
  version: null,
  concurrency: 1,
  createdAt: 0,
  completedAt: 1,
  cancelRequestedAt: null,
  interrupted: false,
  examples: [{ exampleId: 'ex_1', exampleName: 'nul inside' }],
  runs: [
    { id: 'run_exp_a', exampleId: 'ex_1', exampleName: 'x', createdAt: 0 },
    { id: 'run_exp_b', exampleId: 'ex_1', exampleName: 'y', createdAt: 0 },
  ],
  results: {},
};

async function check(stores: AutomationStores) {
  assert.equal((await stores.retention.neededRuns()).size, 0);
  await stores.examples.put(example);
  await stores.experiments.put(experiment);
  const needed = await stores.retention.neededRuns();
  for (const id of ['run_latest', 'run_exp_a', 'run_exp_b']) assert.ok(needed.has(id), id);
}

describe('runs that datasets and experiments need', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-retention-stores-'));
  const cleanup: { server?: PostgresServer } = {};
  after(() =>
    Promise.resolve(cleanup.server?.stop()).finally(() => rmSync(dir, { recursive: true, force: true })),
  );

  it('on LMDB', async () => {
    const stores = openLmdbStores(dir, {
      listScanLimit: 100,
      reserve: new DiskReserve({ store: 'automation store', path: dir, reserveBytes: 0, onChange: () => {} }),
    });
    try {
      await check(stores);
    } finally {
      await stores.close();
    }
  });

  it('on PostgreSQL', { skip: postgresSkip }, async () => {
    const server = (cleanup.server = await startPostgres());
    const db = new PgDatabase({ url: await server.createDatabase(), poolSize: 2 });
    try {
      await migrate(db);
      await check(openPgStores(db));
    } finally {
      await db.close();
    }
  });
});
