// Two Sluice automation nodes, each its own process and data directory, on one private PostgreSQL
// and NO git remote: the registry travels through the database. The nodes start together and
// one seeds the registry (the built-ins) while the other starts from its base bundle; a workflow
// is then released in A's registry repository and synced through A. (a) A run started on A and
// executed on B completes on A's pinned commit, which B fetched from its bundle; (b) releases
// 1.1.0 and 1.2.0 made and synced on A: version 1.1.0, a tag B never had, runs through B (A
// stopped) from the version records and the stored bundle; (c) a run pinning a commit whose
// bundle is gone fails with version_unavailable naming the commit. Each node runs one run at a
// time (AUTOMATION_POOL_THREADS=1), which is how the steps decide which node executes a run.
import { after, before, describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import {
  api,
  gatedFiles,
  GATED,
  openCluster,
  startGated as start,
  type Cluster,
  type Node,
} from './nodes.js';
import { postgresSkip } from '../../helpers/postgres.js';
import { waitUntil } from '../../helpers/wait.js';
import { gitIn, release } from '../registry-git.js';

describe('the registry shared by two nodes through PostgreSQL alone', { skip: postgresSkip }, () => {
  let cluster: Cluster;
  let a: Node;
  let b: Node;
  const gate = () => cluster.gate();
  let db: pg.Client;
  const registry = (node: Node) => join(cluster.dir, node.name, 'automation', 'registry.git');
  const hasCommit = (node: Node, commit: string) => {
    try {
      return (
        gitIn(registry(node), ['rev-parse', '--verify', '--quiet', `${commit}^{commit}`]).trim() === commit
      );
    } catch {
      return false; // exit status 1: no such commit
    }
  };
  const claimedBy = async (id: string) =>
    (
      await db.query<{ node: string }>(`SELECT node FROM runs WHERE id = $1 AND queue_state = 'claimed'`, [
        id,
      ])
    ).rows[0]?.node;
  const finished = (node: Node, id: string) =>
    waitUntil(`run ${id} finished`, async () => {
      const r = await api(node, 'GET', `/runs/${id}?expand=debug`);
      return r.body?.finished === true && r.body;
    });

  before(async () => {
    cluster = await openCluster('sluice-pg-registry-');
    db = cluster.db;
    a = cluster.node('a', { AUTOMATION_POOL_THREADS: '1' });
    b = cluster.node('b', { AUTOMATION_POOL_THREADS: '1' });
    // Together: under the base's lock one seeds the built-ins, the other clones that history.
    await Promise.all([a.start(), b.start()]);
  });

  after(async () => {
    await cluster?.close();
  });

  test('both nodes have one registry history, seeded once', async () => {
    const heads = [a, b].map((n) => gitIn(registry(n), ['rev-parse', 'HEAD']).trim());
    assert.equal(heads[0], heads[1]);
    assert.deepEqual(
      gitIn(registry(b), ['tag', '--list']).split('\n').filter(Boolean),
      gitIn(registry(a), ['tag', '--list']).split('\n').filter(Boolean),
    );
    const base = await db.query<{ value: string }>(`SELECT value FROM meta WHERE key = 'registry/base'`);
    assert.equal(base.rows[0]?.value, heads[0]);
    // The built-ins run on either node.
    for (const node of [a, b]) {
      const r = await api(node, 'POST', '/runs?wait_for_completion=60', {
        target: 'workflows.text-report',
        input: { text: 'hello' },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.execution.status, 'completed', JSON.stringify(r.body));
    }
  });

  test('(a) a run started on A is executed on B, on A’s pinned commit', async () => {
    const commit = release(registry(a), gatedFiles('1.0.0'), `${GATED}@1.0.0`);
    const synced = await api(a, 'POST', `/automations/${GATED}/sync`);
    assert.equal(synced.status, 200, JSON.stringify(synced.body));
    assert.equal(hasCommit(b, commit), false);
    // Two held runs started on A: whichever node claims the first, the other claims the second.
    const g = gate();
    const first = await start(a, g, 'one');
    const firstNode = await waitUntil('the first run claimed', () => claimedBy(first));
    const second = await start(a, g, 'two');
    const secondNode = await waitUntil('the second run claimed', () => claimedBy(second));
    assert.deepEqual([firstNode, secondNode].sort(), ['a', 'b']);
    writeFileSync(g, '');
    for (const [id, text] of [
      [first, 'one'],
      [second, 'two'],
    ] as const) {
      const run = await finished(a, id);
      assert.equal(run.execution.status, 'completed', JSON.stringify(run));
      assert.deepEqual(run.output, { text, edition: '1.0.0' });
      assert.equal(run.source.git.commitSha, commit);
    }
    assert.ok(hasCommit(b, commit), 'B fetched the commit from its bundle');
  });

  test('(b) a release made and synced on A runs through B by its version, a tag B never had', async () => {
    const c110 = release(registry(a), gatedFiles('1.1.0'), `${GATED}@1.1.0`);
    const c120 = release(registry(a), gatedFiles('1.2.0'), `${GATED}@1.2.0`);
    const synced = await api(a, 'POST', `/automations/${GATED}/sync`);
    assert.equal(synced.status, 200, JSON.stringify(synced.body));
    assert.equal(synced.body.release.commit, c120);
    release(registry(a), { 'workflows/text-report/NOTES.md': 'notes\n' }, 'workflows.text-report@1.1.0');
    assert.equal((await api(a, 'POST', '/automations/workflows.text-report/sync')).status, 200);
    // B alone runs what follows.
    await a.stop();
    assert.equal(gitIn(registry(b), ['tag', '--list', `${GATED}@1.1.0`]).trim(), '');
    // Syncs through B, whose repository has neither release, would roll the records back.
    const stale = await api(b, 'POST', '/automations/workflows.text-report/sync');
    assert.equal(stale.status, 409, JSON.stringify(stale.body));
    assert.equal(stale.body.issues[0].code, 'stale_registry');
    assert.equal((await api(b, 'POST', `/automations/${GATED}/sync`)).status, 404);
    const open = gate();
    writeFileSync(open, '');
    for (const [version, commit] of [
      ['1.1.0', c110],
      ['latest', c120],
    ] as const) {
      const r = await api(b, 'POST', `/runs?wait_for_completion=60&version=${version}`, {
        target: GATED,
        input: { gate: open, text: version },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body.output, { text: version, edition: commit === c110 ? '1.1.0' : '1.2.0' });
      assert.equal(r.body.source.git.commitSha, commit);
      assert.equal(r.body.source.git.resolvedTag, `${GATED}@${commit === c110 ? '1.1.0' : '1.2.0'}`);
      const node = await db.query<{ node: string }>('SELECT node FROM runs WHERE id = $1', [r.body.id]);
      assert.equal(node.rows[0]?.node, 'b');
    }
  });

  test('(c) a run pinning a commit whose bundle is gone fails with version_unavailable', async () => {
    // B is full with a held run, then A comes back and is full with another: the next run waits.
    const holdB = gate();
    const onB = await start(b, holdB, 'held on B');
    assert.equal(await waitUntil('B runs it', () => claimedBy(onB)), 'b');
    await a.start();
    const holdA = gate();
    const onA = await start(a, holdA, 'held on A');
    assert.equal(await waitUntil('A runs it', () => claimedBy(onA)), 'a');
    // A commit of A's registry that no release names, pinned by a run started on A (which
    // publishes its bundle), whose bundle then goes away before B runs it.
    const commit = release(registry(a), gatedFiles('unreleased'));
    const pinned = await start(a, gate(), 'pinned', `?version=${commit}`);
    const held = await db.query('SELECT 1 FROM registry_sources WHERE commit_sha = $1', [commit]);
    assert.equal(held.rowCount, 1, 'the start published the commit');
    await db.query('DELETE FROM registry_sources WHERE commit_sha = $1', [commit]);
    await db.query('DELETE FROM blob_holds WHERE holder = $1', [`registry:${commit}`]);
    writeFileSync(holdB, '');
    const run = await finished(b, pinned);
    assert.equal(run.execution.status, 'failed', JSON.stringify(run));
    assert.equal(run.debug.observability.failure.code, 'version_unavailable', JSON.stringify(run));
    assert.match(run.error, new RegExp(`commit ${commit} is not in this node's registry repository`));
    assert.match(run.error, /no bundle of it is stored/);
    const node = await db.query<{ node: string }>('SELECT node FROM runs WHERE id = $1', [pinned]);
    assert.equal(node.rows[0]?.node, 'b');
    writeFileSync(holdA, '');
    for (const [node, id] of [
      [b, onB],
      [a, onA],
    ] as const)
      assert.equal((await finished(node, id)).execution.status, 'completed');
  });
});
