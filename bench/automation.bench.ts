// Automation hot paths, each against a ceiling measured in the same run:
// - a list page at 100k stored runs (LmdbRunStore.list with filters) vs a raw LMDB range read of the
//   same 50 index entries and records;
// - a synchronous run of the built-in workflow through HTTP + the piscina pool vs an
//   authenticated GET of the same server (/auth/check), the least an HTTP round trip costs.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openAutomationDb, type AutomationDb } from '../src/automation/db.js';
import type { RunListQuery } from '../src/automation/runs/list.js';
import { LmdbRunStore } from '../src/automation/runs/store.js';
import { startAutomation, type RunningAutomation } from '../src/automation/index.js';
import { makeTestContext } from '../test/helpers/context.js';
import { fillRuns } from '../loadtest/scenarios/automation-support/fill.js';
import type { BenchFile, BenchSuite } from './types.js';

const RUNS = Number(process.env['BENCH_AUTOMATION_RUNS'] ?? 100_000);

function listSuite(): BenchSuite {
  let dir = '';
  let db: AutomationDb;
  let store: LmdbRunStore;
  let midCursor = '';
  // Async functions, not functions returning a promise: tinybench tells async tasks by their type.
  const page = (q: Partial<RunListQuery>) => async () =>
    store.list({ limit: 50, sort: 'createdAt', order: 'desc', tenant: 'default', ...q });
  return {
    name: `automation run list page, ${RUNS.toLocaleString('en')} stored runs`,
    description:
      'LmdbRunStore.list (index range scan + record reads + filters) for a 50-run page vs raw getRange of 50 index entries and their records',
    ceiling: 'raw LMDB range, 50 entries + records',
    setup: async () => {
      dir = mkdtempSync(join(tmpdir(), 'sluice-bench-auto-'));
      await fillRuns(join(dir, 'meta.lmdb'), RUNS);
      db = openAutomationDb(join(dir, 'meta.lmdb'));
      store = new LmdbRunStore(db, { listScanLimit: 20_000 });
      const whole = new LmdbRunStore(db, { listScanLimit: RUNS });
      midCursor =
        (
          await whole.list({
            limit: Math.floor(RUNS / 2),
            sort: 'createdAt',
            order: 'desc',
            tenant: 'default',
          })
        ).nextCursor ?? '';
    },
    teardown: async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
    tasks: {
      'raw LMDB range, 50 entries + records': () => {
        let n = 0;
        for (const { key } of db.runIndex.getRange({
          start: ['all', '', 'default', Number.MAX_SAFE_INTEGER, '\uffff'],
          end: ['all', '', 'default', 0, ''],
          reverse: true,
          limit: 50,
        })) {
          if (db.runs.get(String(key[4]))) n++;
        }
        return n;
      },
      'page, no filter': page({}),
      'page, status=completed': page({ statuses: ['completed'] }),
      'page, type=agent + triggered_by=bob (post-filter)': page({ types: ['agent'], triggeredBy: ['bob'] }),
      'page, batch_id (index)': page({ batchIds: ['batch-50'] }),
      'page, sample_rate=0.1': page({ sampleRate: 0.1 }),
      'page, cursor at the middle': async () =>
        store.list({ limit: 50, sort: 'createdAt', order: 'desc', tenant: 'default', cursor: midCursor }),
      'page, sort=completed_at asc': page({ sort: 'completedAt', order: 'asc' }),
    },
  };
}

function runSuite(): BenchSuite {
  let service: RunningAutomation;
  let cleanup: (() => Promise<void>) | undefined;
  let token = '';
  const post = async (body: unknown) =>
    fetch(`${service.url}/api/v1/runs?wait_for_completion=10`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (r) => {
      const run = (await r.json()) as { execution?: { status?: string } };
      if (run.execution?.status !== 'completed')
        throw new Error(`run did not complete: ${JSON.stringify(run)}`);
    });
  return {
    name: 'automation sync run of the built-in workflow',
    description:
      'POST /runs?wait_for_completion=10 (workflows.text-report: 3 steps, 1 output file, commits) over HTTP vs GET /auth/check on the same server',
    ceiling: 'GET /auth/check (HTTP round trip)',
    setup: async () => {
      const t = await makeTestContext({ env: { AUTOMATION_POOL_THREADS: '2' } });
      cleanup = () => t.cleanup();
      token = t.token;
      service = await startAutomation(t.ctx);
    },
    teardown: async () => {
      await service.close();
      await cleanup?.();
    },
    tasks: {
      'GET /auth/check (HTTP round trip)': async () => {
        await (
          await fetch(`${service.url}/api/v1/auth/check`, { headers: { authorization: `Bearer ${token}` } })
        ).arrayBuffer();
      },
      'POST /runs sync, workflows.text-report': async () =>
        post({ target: 'workflows.text-report', input: { text: 'the quick brown fox' } }),
      'POST /runs sync, agents.echo-agent': async () =>
        post({ target: 'agents.echo-agent', input: { text: 'the quick brown fox' } }),
    },
  };
}

const file: BenchFile = () => [listSuite(), runSuite()];
export default file;
