// The automation databases every run reads and writes keep their msgpack record structures
// shared (src/automation/db.ts). Data directories written before that, each value carrying its
// structures inline, must still open and read the same: this test writes one the way earlier
// versions did (lmdb-js opened with no shared structures), then reads it through the store,
// writes new runs beside it, and reads both again after a reopen.

import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { open } from 'lmdb';
import { openAutomationDb, structuresKey, type AutomationDb } from '../../src/automation/db.js';
import { LmdbAutomationStore } from '../../src/automation/registry/store.js';
import { LmdbRunStore, indexKeys } from '../../src/automation/runs/store.js';
import {
  emptyDetail,
  type RunDetail,
  type RunEvent,
  type RunRecord,
} from '../../src/automation/runs/types.js';
import { contractRun } from './contracts/run-store.contract.js';

const TENANT = 'acme';

function detailOf(run: RunRecord): RunDetail {
  const d = emptyDetail();
  return {
    ...d,
    input: { ...d.input, args: { text: `input of ${run.id}`, nested: { n: 1 } } },
    manifest: { name: run.slug },
  };
}

function eventsOf(run: RunRecord): RunEvent[] {
  return [
    { seq: 1, type: 'run.created', timestamp: new Date(run.createdAt).toISOString(), status: 'pending' },
    {
      seq: 2,
      type: 'step.completed',
      timestamp: new Date(run.createdAt).toISOString(),
      metadata: { stepName: 'a' },
    },
  ] as RunEvent[];
}

const automation = {
  id: 'wf_old',
  type: 'workflow',
  slug: 'old',
  name: 'written before shared structures',
  description: '',
  status: 'enabled',
  version: '1.0.0',
  tag: 'old@1.0.0',
  commit: 'a'.repeat(40),
  versionId: 'ver_old',
  triggers: [],
  inputSchema: null,
  outputSchema: null,
  model: null,
  createdAt: 1,
  updatedAt: 2,
};

/** What an earlier version wrote: the same databases, values with their structures inline. */
async function writeOldFormat(path: string, runs: RunRecord[]): Promise<void> {
  const root = open({ path, compression: false, maxDbs: 64 });
  const db = (name: string) => root.openDB({ name });
  const [records, details, index, events, automations] = [
    db('runs'),
    db('run-details'),
    db('run-index'),
    db('run-events'),
    db('automations'),
  ];
  await root.transaction(() => {
    for (const run of runs) {
      records.putSync(run.id, run);
      details.putSync(run.id, detailOf(run));
      for (const key of indexKeys(run)) index.putSync(key, run.sampleRank);
      for (const e of eventsOf(run)) events.putSync([run.id, e.seq], e);
    }
    automations.putSync(automation.id, automation);
  });
  await root.close();
}

async function readsBack(db: AutomationDb, runs: RunRecord[]): Promise<void> {
  const store = new LmdbRunStore(db);
  for (const run of runs) {
    assert.deepEqual(await store.get(run.id), run);
    assert.deepEqual(await store.getDetail(run.id), detailOf(run));
    assert.deepEqual(await store.events(run.id), eventsOf(run));
  }
  const page = await store.list({ tenant: TENANT, limit: 1000, order: 'asc', sort: 'createdAt' });
  assert.deepEqual(
    page.runs.map((r) => r.id),
    [...runs].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1)).map((r) => r.id),
  );
}

describe('run databases written before shared structures', () => {
  let dir: string;
  let path: string;
  const old = Array.from({ length: 12 }, (_, i) => contractRun(TENANT, i));
  const later = Array.from({ length: 12 }, (_, i) => contractRun(TENANT, 100 + i, { name: 'written after' }));

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-run-format-'));
    path = join(dir, 'meta.lmdb');
    await writeOldFormat(path, old);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the old values, writes new ones with shared structures, and reads both after a reopen', async () => {
    const db = openAutomationDb(path);
    try {
      await readsBack(db, old);
      assert.deepEqual(await new LmdbAutomationStore(db).get(automation.id), automation);

      const store = new LmdbRunStore(db);
      for (const run of later) await store.create(run, detailOf(run), eventsOf(run));
      // The structures are kept in meta, not under a key of the databases themselves.
      assert.ok(Array.isArray(db.meta.get(structuresKey('runs'))));
      assert.ok(Array.isArray(db.meta.get(structuresKey('run-details'))));
      assert.ok(Array.isArray(db.meta.get(structuresKey('run-events'))));
      assert.deepEqual([...db.runs.getKeys()].sort(), [...old, ...later].map((r) => r.id).sort());
      // A new value names its structure instead of carrying it: smaller than the old one.
      assert.ok(db.runs.getBinary(later[0]!.id)!.length < db.runs.getBinary(old[0]!.id)!.length);
      // Old values still read once shared structures exist (an inline definition over a shared one).
      await readsBack(db, [...old, ...later]);
    } finally {
      await db.close();
    }

    const again = openAutomationDb(path);
    try {
      await readsBack(again, [...old, ...later]);
      assert.deepEqual(await new LmdbAutomationStore(again).get(automation.id), automation);
    } finally {
      await again.close();
    }
  });
});
