// Schedules on two nodes over one PostgreSQL, on the real clock: an every-2-seconds schedule
// gives one run per tick, none twice, while both nodes look for due ticks at every tick; then a
// node is SIGKILLed in the middle of a tick's claim (it holds the tick's row and waits to insert
// the run, held there by a table lock this test takes), and the other node fires that tick and
// the following ones: none lost, none doubled. Runs are counted by the tick each records
// (input metadata schedule.tick), not by when they appeared. AUTOMATION_CRON_CATCHUP is large so
// that a node late on a loaded machine still fires every tick instead of only the latest.
import { after, before, describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import pg from 'pg';
import { api, openCluster, registryRemote, type Cluster, type Node } from './nodes.js';
import { postgresSkip } from '../../helpers/postgres.js';
import { waitUntil } from '../../helpers/wait.js';
import { workflowManifest } from '../registry-git.js';

const TICKER: Record<string, string> = {
  'workflows/ticker/manifest.json': workflowManifest('Ticker', {
    inputSchema: { type: 'object', required: ['n'] },
    triggers: { cron: { schedule: '*/2 * * * * *', input: { n: 1 }, overlap: 'allow' } },
  }),
  'workflows/ticker/index.js': `export default { steps: [{ name: 'echo', async run(ctx) { return ctx.input; } }] };\n`,
};

describe('schedules on two nodes over one PostgreSQL', { skip: postgresSkip }, () => {
  let cluster: Cluster;
  const nodes: Node[] = [];

  /** Each scheduled run's tick, as stored. */
  const ticks = async (): Promise<number[]> => {
    const { rows } = await cluster.db.query<{ tick: string }>(
      `SELECT d.detail->'input'->'metadata'->'schedule'->>'tick' AS tick
       FROM runs r JOIN run_details d ON d.run_id = r.id WHERE r.trigger_type = 'cron'`,
    );
    return rows.map((r) => Date.parse(r.tick)).sort((x, y) => x - y);
  };
  /** One run per tick, and no tick left out between the first and the last. */
  const assertOncePerTick = (all: number[]) => {
    assert.equal(
      new Set(all).size,
      all.length,
      `a tick fired twice: ${all.map((t) => new Date(t).toISOString())}`,
    );
    for (let i = 1; i < all.length; i++)
      assert.equal(
        all[i]! - all[i - 1]!,
        2000,
        `a tick is missing after ${new Date(all[i - 1]!).toISOString()}`,
      );
  };

  before(async () => {
    cluster = await openCluster('sluice-pg-cron-');
    const remote = registryRemote(cluster.dir, { 'workflows.ticker': TICKER });
    const env = {
      AUTOMATION_REGISTRY_URL: remote,
      AUTOMATION_SEED_BUILTINS: 'false',
      AUTOMATION_POOL_THREADS: '2',
      AUTOMATION_CRON_CATCHUP: '1000',
    };
    nodes.push(cluster.node('a', env), cluster.node('b', env));
    await Promise.all(nodes.map((n) => n.start()));
  });

  after(async () => {
    await cluster?.close();
  });

  test('one run per tick over 20 s with both nodes claiming; a node killed mid-claim loses and doubles none', async () => {
    const synced = await api(nodes[0]!, 'POST', '/automations/workflows.ticker/sync');
    assert.equal(synced.status, 200, JSON.stringify(synced.body));
    const listed = await api(nodes[1]!, 'GET', '/schedules');
    assert.equal(listed.body.total, 1);
    assert.equal(listed.body.data[0].schedule, '*/2 * * * * *');

    // 20 s of ticks: 10 at least, each once.
    const first = await waitUntil('ten ticks fired', async () => {
      const all = await ticks();
      return all.length >= 11 && all;
    });
    assertOncePerTick(first);

    // The next claim stops at its run's insert: the claiming node holds the tick's row.
    const blocker = new pg.Client({ connectionString: cluster.url });
    await blocker.connect();
    let victim: Node;
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE runs IN EXCLUSIVE MODE');
      // Asked on another connection: in a transaction pg_stat_activity keeps its first snapshot.
      const holder = await waitUntil('a node to wait inside a tick claim', async () => {
        const { rows } = await cluster.db.query<{ app: string }>(
          `SELECT application_name AS app FROM pg_stat_activity
           WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO runs%' AND application_name LIKE 'sluice-automation:%'`,
        );
        return rows[0]?.app;
      });
      victim = nodes.find((n) => holder === `sluice-automation:${n.name}`)!;
      assert.ok(victim, holder);
      await victim.kill();
    } finally {
      await blocker.query('COMMIT').catch(() => undefined);
      await blocker.end();
    }
    const survivor = nodes.find((n) => n !== victim)!;
    const before = (await ticks()).length;
    const all = await waitUntil('five more ticks fired by the survivor', async () => {
      const now = await ticks();
      return now.length >= before + 5 && now;
    });
    assertOncePerTick(all);
    const schedule = (await api(survivor, 'GET', '/schedules')).body.data[0];
    assert.ok(schedule.fired >= all.length, JSON.stringify(schedule));
  });
});
