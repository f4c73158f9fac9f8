// Each node's registry cache (src/automation/pg/registry-cache.ts), with two Sluice automation
// nodes on one private PostgreSQL and a shared registry remote. (a) A release synced through A
// is what a start on B resolves `latest` to, B having resolved it before (its cache held the
// older versions): the sync's notification dropped B's cache. (b) A change made in the
// database without a notification is not seen by B while its listening connection is up (B
// answers from its cache), and is seen once that connection was killed (pg_terminate_backend):
// B dropped its cache when the connection broke and did not trust it until it listened again.
import { after, before, describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import { api, GATED, gatedFiles, openCluster, registryRemote, type Cluster, type Node } from './nodes.js';
import { postgresSkip } from '../../helpers/postgres.js';
import { waitUntil } from '../../helpers/wait.js';
import { release } from '../registry-git.js';

describe('the registry cache of nodes on one PostgreSQL', { skip: postgresSkip }, () => {
  let cluster: Cluster;
  let a: Node;
  let b: Node;
  let remote: string;
  let gate: string;
  let commit100 = '';

  /** The release tag a synchronous `latest` run of workflows.gated on `node` ran. */
  const latestOn = async (node: Node): Promise<string> => {
    const r = await api(node, 'POST', '/runs?wait_for_completion=60', {
      target: GATED,
      input: { gate, text: 'x' },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    if (r.body.source.git.resolvedTag === `${GATED}@1.0.0`) commit100 = r.body.source.git.commitSha;
    return r.body.source.git.resolvedTag as string;
  };
  /** The pid of `node`'s listening connection (the run queue's, which the cache shares). */
  const listenerPid = async (node: Node): Promise<number | undefined> =>
    (
      await cluster.db.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()',
        [`sluice-run-queue:${node.name}`],
      )
    ).rows[0]?.pid;

  before(async () => {
    cluster = await openCluster('sluice-pg-registry-cache-');
    remote = registryRemote(cluster.dir, { [GATED]: gatedFiles('1.0.0') });
    const env = { AUTOMATION_REGISTRY_URL: remote };
    a = cluster.node('a', env);
    b = cluster.node('b', env);
    await a.start();
    await b.start();
    gate = cluster.gate();
    writeFileSync(gate, '');
  });

  after(async () => {
    await cluster?.close();
  });

  test('(a) a release synced through A is what B resolves next', async () => {
    assert.equal(await latestOn(b), `${GATED}@1.0.0`);
    assert.equal(await latestOn(b), `${GATED}@1.0.0`);
    release(remote, gatedFiles('1.1.0'), `${GATED}@1.1.0`);
    const synced = await api(a, 'POST', `/automations/${GATED}/sync`);
    assert.equal(synced.status, 200, JSON.stringify(synced.body));
    // B hears the sync's notification a moment after A's answer: wait for what it resolves.
    await waitUntil('B to resolve latest to 1.1.0', async () => (await latestOn(b)) === `${GATED}@1.1.0`);
    assert.equal(await latestOn(a), `${GATED}@1.1.0`);
  });

  test('(b) after its listening connection is killed, B does not trust its cache', async () => {
    assert.equal(await latestOn(b), `${GATED}@1.1.0`);
    // A change no node announces (as one whose notification was lost): B answers from its cache.
    // `latest` is the automation record's release: point it back at 1.0.0.
    const updated = await cluster.db.query(
      `UPDATE automations SET record = (record::jsonb || jsonb_build_object(
         'version', '1.0.0', 'tag', $2::text, 'commit', $3::text))::json
       WHERE id = (SELECT automation_id FROM automation_aliases WHERE alias = $1)`,
      [GATED, `${GATED}@1.0.0`, commit100],
    );
    assert.equal(updated.rowCount, 1);
    assert.equal(await latestOn(b), `${GATED}@1.1.0`);
    const pid = await listenerPid(b);
    assert.ok(pid !== undefined, 'B listens');
    await cluster.db.query('SELECT pg_terminate_backend($1)', [pid]);
    await waitUntil('B to listen again', async () => {
      const now = await listenerPid(b);
      return now !== undefined && now !== pid;
    });
    assert.equal(await latestOn(b), `${GATED}@1.0.0`);
    // A heard nothing either and its connection is up: it still answers from its cache, as B did.
    assert.equal(await latestOn(a), `${GATED}@1.1.0`);
  });
});
