// Automation retention on PostgreSQL, two nodes (two services in this process) on one private
// server, with one movable clock: a run past AUTOMATION_RUN_RETENTION is removed with its files
// and the blob only it held, a reviewed one stays; a `run-input` upload past its retention is
// removed; the registry bundle of a commit no run pins any more (a commit started by its sha) is
// collected while one a kept run pins, and every release's, stay; and the two nodes passing together remove each run once, without errors, one at a
// time (a held advisory lock makes a node skip). Passes are called directly (the timer's
// interval is a day).

import { after, before, describe, it } from 'node:test';
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { RETENTION_LOCK_KEY } from '../../../src/automation/retention/pg-store.js';
import { postgresSkip, startPostgres, type PostgresServer } from '../../helpers/postgres.js';
import { startHarness, type Harness } from '../harness.js';
import { FILE_ECHO, gitIn, release } from '../registry-git.js';

const HOUR = 3600_000;
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('automation retention on PostgreSQL (two nodes)', { skip: postgresSkip }, () => {
  let server: PostgresServer;
  let db: pg.Client;
  let url: string;
  let a: Harness;
  let b: Harness;
  let offset = 0;
  const now = () => Date.now() + offset;
  const commits: string[] = [];

  before(async () => {
    server = await startPostgres();
    url = await server.createDatabase();
    db = new pg.Client({ connectionString: url });
    await db.connect();
    const env = {
      AUTOMATION_DATABASE_URL: url,
      AUTOMATION_RUN_RETENTION: '1h',
      AUTOMATION_RETENTION_CHECK_INTERVAL: '24h',
    };
    a = await startHarness({ ...env, AUTOMATION_NODE_ID: 'node-a' }, { now });
    b = await startHarness({ ...env, AUTOMATION_NODE_ID: 'node-b' }, { now });
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await db?.end().catch(() => undefined);
    await server?.stop();
  });

  /** Releases FILE_ECHO as `version` (a new commit each time) on node A's registry. */
  async function releaseEcho(version: string) {
    commits.push(release(a.registryPath, { ...FILE_ECHO, 'workflows/file-echo/VERSION': version }));
    gitIn(a.registryPath, ['tag', '-a', `workflows.file-echo@${version}`, '-m', version]);
    assert.equal((await a.api('POST', '/automations/workflows.file-echo/sync')).status, 200);
  }

  /** A run of `version` with a file part of its own (a blob only the run holds). */
  async function runWith(version: string, content: string): Promise<string> {
    const form = new FormData();
    form.append('target', 'workflows.file-echo');
    form.append('files.doc', new Blob([content]), 'doc.txt');
    const res = await fetch(`${a.url}/api/v1/runs?wait_for_completion=30&version=${version}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.token}` },
      body: form,
    });
    const run = (await res.json()) as { id: string; execution: { status: string } };
    assert.equal(run.execution.status, 'completed', JSON.stringify(run));
    return run.id;
  }

  const sources = async () =>
    (await db.query<{ commit_sha: string }>('SELECT commit_sha FROM registry_sources')).rows.map(
      (r) => r.commit_sha,
    );
  const runFolder = (h: Harness, id: string) => join(h.service.core.settings.dataDir, 'runs', id);

  /** A commit on A's registry branch without a release (a run can be started at its sha). */
  const devCommit = (note: string) => release(a.registryPath, { 'workflows/file-echo/NOTE': note });

  it('removes an old run with its blob and idle bundle, keeps a reviewed one and its bundle', async () => {
    await releaseEcho('1.0.0');
    const c1 = devCommit('the old run pins this');
    const old = await runWith(c1, 'only the old run holds this');
    const c2 = devCommit('the reviewed run pins this');
    const reviewed = await runWith(c2, 'the reviewed run holds this');
    assert.equal(
      (await a.api('PUT', `/runs/${reviewed}/reviews`, { body: { verdict: 'correct' } })).status,
      200,
    );
    await releaseEcho('2.0.0');
    const [r1, r2] = commits as [string, string];
    assert.ok((await sources()).includes(c1) && (await sources()).includes(c2));
    const form = new FormData();
    form.append('purpose', 'run-input');
    form.append('file', new Blob(['an upload for a day']), 'day.txt');
    const up = (await (
      await fetch(`${a.url}/api/v1/files`, {
        method: 'POST',
        headers: { authorization: `Bearer ${a.token}` },
        body: form,
      })
    ).json()) as { id: string };
    assert.ok(await a.service.core.files.blobs.stat(sha('only the old run holds this')));

    offset = 2 * HOUR;
    const pass = await a.service.core.retention.pass();
    assert.equal(pass?.collected, true);
    assert.equal(pass.removed.runs.records, 1);
    assert.ok(pass.removed.blobs.bytes >= 'only the old run holds this'.length);
    assert.equal(pass.removed.bundles.records, 1);
    // B removes the folder it may have of the run (whichever node executed it).
    assert.ok((await b.service.core.retention.pass()) !== undefined);
    for (const h of [a, b]) {
      assert.equal((await h.api('GET', `/runs/${old}`)).status, 404);
      assert.ok(!existsSync(runFolder(h, old)));
      assert.equal((await h.api('GET', `/runs/${reviewed}`)).status, 200);
    }
    assert.equal(await a.service.core.files.blobs.stat(sha('only the old run holds this')), undefined);
    assert.ok(await a.service.core.files.blobs.stat(sha('the reviewed run holds this')));
    const snap = await b.api('GET', `/runs/${reviewed}/artifacts/input/doc/doc.txt`);
    assert.equal(snap.body.toString(), 'the reviewed run holds this');
    // C1's bundle went with the last run pinning it; C2's stays for the reviewed run.
    const left = await sources();
    assert.ok(!left.includes(c1), 'the unpinned bundle is collected');
    assert.ok(left.includes(c2), 'the pinned bundle is kept');
    // Releases stay runnable on every node, whichever runs pin them.
    assert.ok(left.includes(r1) && left.includes(r2), 'release bundles are kept');
    assert.equal((await db.query('SELECT 1 FROM blob_holds WHERE holder = $1', [`run:${old}`])).rowCount, 0);
    // The upload (24 hours) is still there; a day later it is not.
    assert.equal((await a.api('GET', `/files/${up.id}`)).status, 200);
    offset = 25 * HOUR;
    const later = await b.service.core.retention.pass();
    assert.equal(later?.removed.uploads.records, 1);
    assert.equal((await a.api('GET', `/files/${up.id}`)).status, 404);
    assert.equal(await a.service.core.files.blobs.stat(sha('an upload for a day')), undefined);
    assert.ok((await sources()).includes(c2));
  });

  it('lets one node pass at a time: a held lock skips, two nodes together remove each run once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await runWith('2.0.0', `run ${i} of four`));
    offset = 30 * HOUR;
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [RETENTION_LOCK_KEY.toString()]);
      const skipped = await a.service.core.retention.pass();
      assert.equal(skipped?.collected, false);
      assert.equal(skipped.removed.runs.records, 0);
      assert.equal((await a.api('GET', `/runs/${ids[0]}`)).status, 200);
    } finally {
      await holder.end();
    }
    const [ra, rb] = await Promise.all([a.service.core.retention.pass(), b.service.core.retention.pass()]);
    assert.ok(ra && rb, 'neither pass failed');
    assert.equal(ra.removed.runs.records + rb.removed.runs.records, 4);
    for (const id of ids) assert.equal((await b.api('GET', `/runs/${id}`)).status, 404);
    for (const h of [a, b]) {
      const text = await (await fetch(`${h.url}/metrics`)).text();
      assert.match(text, /^sluice_automation_retention_errors_total 0$/m);
      assert.match(text, /^sluice_automation_retention_last_pass_timestamp_seconds [1-9]/m);
    }
  });
});
