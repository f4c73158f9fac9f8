// The concurrency limits of the shared run queue (AUTOMATION_TENANT_CONCURRENCY,
// AUTOMATION_AUTOMATION_CONCURRENCY), end to end through the service: two Sluice nodes, each its
// own process with two pool threads, on one private PostgreSQL. (a) Tenant limit 1: four held
// runs of one tenant, started on both nodes, run one at a time, while another tenant's run is
// claimed and finishes. (b) The same, behind 80 queued runs of the tenant (more than one claim
// round reads). (c) Automation limit 1: two held runs of automation X and one of Y; one X and
// the Y run at once, the second X only once the first has finished. Every run waits on a
// gate file of its own; the test waits on state (the queue's rows, the runs' records), never on
// the clock. A run held back is passed over by a claim round when a run queued after it is
// claimed: that is what makes "it stays queued" an observation rather than a sleep.
import { after, before, describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openPgKeyAdmin } from '../../../src/automation/pg/key-store.js';
import { api, automationNode, gatedWorkflow, registryRemote, TOKEN, type Node } from './nodes.js';
import { postgresSkip, startPostgres, type PostgresServer } from '../../helpers/postgres.js';
import { waitUntil } from '../../helpers/wait.js';

const X = 'workflows.gated';
const Y = 'workflows.gated-two';
/** The tenant of the nodes' admin token (TOKEN); the other tenant's key is made per cluster. */
const TENANT = 'default';
const OTHER = 'tenant-two';

interface Cluster {
  a: Node;
  b: Node;
  db: pg.Client;
  /** An admin key of tenant OTHER. */
  otherToken: string;
}

interface Timing {
  status: string;
  startedAt: string | null;
  completedAt: string | null;
}

describe('run concurrency limits on two nodes over one PostgreSQL', { skip: postgresSkip }, () => {
  let server: PostgresServer;
  let dir: string;
  let remote: string;
  const nodes: Node[] = [];
  const clients: pg.Client[] = [];
  const gates: string[] = [];
  let tenantCluster: Cluster | undefined;
  const gate = () => {
    const path = join(dir, `gate-${gates.length}`);
    gates.push(path);
    return path;
  };

  before(async () => {
    server = await startPostgres();
    dir = mkdtempSync(join(tmpdir(), 'sluice-pg-limits-'));
    remote = registryRemote(dir, { [X]: gatedWorkflow('gated'), [Y]: gatedWorkflow('gated-two') });
  });

  after(async () => {
    for (const g of gates) writeFileSync(g, '');
    for (const n of nodes) await n.stop();
    for (const c of clients) await c.end().catch(() => undefined);
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Two nodes with these limits on a database of their own, and a key of a second tenant. */
  async function cluster(name: string, limits: Record<string, string>): Promise<Cluster> {
    const url = await server.createDatabase();
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    clients.push(db);
    // The second tenant's key, made as `sluice keys create --tenant` makes it (the same store
    // call), before the nodes start: each loads the key table at start.
    const keys = await openPgKeyAdmin({ url, poolSize: 2, connectTimeoutMs: 10_000 });
    const otherToken = (await keys.create({ tenant: OTHER, name: 'limits test' })).token;
    await keys.close();
    const env = {
      AUTOMATION_DATABASE_URL: url,
      AUTOMATION_REGISTRY_URL: remote,
      AUTOMATION_SEED_BUILTINS: 'false',
      AUTOMATION_POOL_THREADS: '2',
      ...limits,
    };
    const a = automationNode(`${name}-a`, join(dir, `${name}-a`), env);
    const b = automationNode(`${name}-b`, join(dir, `${name}-b`), env);
    nodes.push(a, b);
    await a.start();
    await b.start();
    return { a, b, db, otherToken };
  }

  const start = async (node: Node, target: string, gatePath: string, text: string, token = TOKEN) => {
    const r = await api(node, 'POST', '/runs', { target, input: { gate: gatePath, text } }, token);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.id as string;
  };
  const timing = async (node: Node, id: string, token = TOKEN): Promise<Timing> => {
    const r = await api(node, 'GET', `/runs/${id}`, undefined, token);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return { status: r.body.execution.status, ...r.body.timing };
  };
  const queueStates = async (db: pg.Client, ids: string[]) => {
    const { rows } = await db.query<{ id: string; queue_state: string }>(
      'SELECT id, queue_state FROM runs WHERE id = ANY($1)',
      [ids],
    );
    return new Map(rows.map((r) => [r.id, r.queue_state]));
  };
  const claimedOf = async (db: pg.Client, ids: string[]) =>
    [...(await queueStates(db, ids))].filter(([, s]) => s === 'claimed').map(([id]) => id);
  /** Runs one after another: each ends no later than the next one starts. */
  const assertSerial = (runs: Timing[]) => {
    const sorted = [...runs].sort((p, q) => Date.parse(p.startedAt!) - Date.parse(q.startedAt!));
    for (let i = 1; i < sorted.length; i++)
      assert.ok(
        Date.parse(sorted[i - 1]!.completedAt!) <= Date.parse(sorted[i]!.startedAt!),
        `runs overlap: ${JSON.stringify(sorted)}`,
      );
  };

  test('(a) tenant limit 1: one run of the tenant at a time across both nodes; another tenant is not held back', async (t) => {
    tenantCluster = await cluster('tenant', { AUTOMATION_TENANT_CONCURRENCY: '1' });
    const { a, b, db, otherToken } = tenantCluster;
    // Every sample of the queue while the test runs: never two of the tenant's runs claimed.
    let most = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const { rows } = await db.query<{ n: string }>(
          `SELECT count(*) AS n FROM runs WHERE tenant = $1 AND queue_state = 'claimed'`,
          [TENANT],
        );
        most = Math.max(most, Number(rows[0]!.n));
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    // Stopped however the steps end; a failed query fails the test when awaited below.
    t.after(() => {
      sampling = false;
      return sampler.catch(() => undefined);
    });

    const held = new Map<string, string>(); // run id → its gate
    for (let i = 0; i < 4; i++) {
      const g = gate();
      held.set(await start(i % 2 ? b : a, X, g, `t${i}`), g);
    }
    const ids = [...held.keys()];
    const first = await waitUntil('a run of the tenant claimed', async () => {
      const c = await claimedOf(db, ids);
      return c.length > 0 && c;
    });
    assert.equal(first.length, 1);

    // A run of the other tenant, queued after the four: it is claimed (so a claim round passed
    // over the three held back, with room on both nodes: four pool threads, one busy) and
    // finishes while the tenant's run still holds its slot.
    const open = gate();
    writeFileSync(open, '');
    const otherId = await start(b, X, open, 'other', otherToken);
    await waitUntil('the other tenant’s run completed', async () => {
      return (await timing(a, otherId, otherToken)).status === 'completed';
    });
    const states = await queueStates(db, ids);
    assert.deepEqual(
      ids.map((id) => states.get(id)),
      ids.map((id) => (id === first[0] ? 'claimed' : 'queued')),
    );
    // What a client sees of a run held back by the limit: pending (queued), not started.
    for (const id of ids.filter((x) => x !== first[0])) {
      const seen = await timing(a, id);
      assert.equal(seen.status, 'pending');
      assert.equal(seen.startedAt, null);
    }

    // Open the gates one at a time, each of the run that holds the slot.
    const done = new Set<string>();
    while (done.size < ids.length) {
      const current = await waitUntil(`run ${done.size + 1} of the tenant claimed`, async () => {
        const c = (await claimedOf(db, ids)).filter((id) => !done.has(id));
        assert.ok(c.length <= 1, `two of the tenant’s runs claimed: ${c.join(', ')}`);
        return c[0];
      });
      const running = [];
      for (const id of ids) if ((await timing(a, id)).status === 'running') running.push(id);
      assert.ok(
        running.every((id) => id === current),
        `running: ${running.join(', ')}; claimed: ${current}`,
      );
      writeFileSync(held.get(current)!, '');
      await waitUntil(
        `run ${current} completed`,
        async () => (await timing(b, current)).status === 'completed',
      );
      done.add(current);
    }
    sampling = false;
    await sampler;
    assert.equal(most, 1);
    const runs = await Promise.all(ids.map((id) => timing(a, id)));
    assert.ok(
      runs.every((r) => r.status === 'completed'),
      JSON.stringify(runs),
    );
    assertSerial(runs);
  });

  test('(b) tenant limit 1: a tenant with more runs queued than a claim looks at does not hold back another', async () => {
    const { a, b, otherToken } = tenantCluster!;
    const hold = gate();
    const first = await start(a, X, hold, 'head');
    await waitUntil('the tenant’s run claimed', async () => (await timing(a, first)).status === 'running');
    // More of the tenant's runs queued than one claim round reads (its window: at least 64).
    const backlog: string[] = [];
    for (let i = 0; i < 80; i++) backlog.push(await start(i % 2 ? b : a, X, hold, `q${i}`));
    const open = gate();
    writeFileSync(open, '');
    const otherId = await start(b, X, open, 'other', otherToken);
    await waitUntil('the other tenant’s run completed', async () => {
      return (await timing(a, otherId, otherToken)).status === 'completed';
    });
    for (const id of backlog) assert.equal((await timing(b, id)).status, 'pending');
    for (const id of backlog) {
      const r = await api(a, 'POST', `/runs/${id}/cancel`);
      assert.ok(r.status < 300, JSON.stringify(r.body));
    }
    writeFileSync(hold, '');
    await waitUntil(
      'the tenant’s run completed',
      async () => (await timing(b, first)).status === 'completed',
    );
    await a.stop();
    await b.stop();
  });

  test('(c) automation limit 1: one X and the Y run at once, the second X once the first has finished', async () => {
    const { a, b, db } = await cluster('automation', { AUTOMATION_AUTOMATION_CONCURRENCY: '1' });
    const gx = [gate(), gate()];
    const gy = gate();
    const xs = [await start(a, X, gx[0]!, 'x0'), await start(b, X, gx[1]!, 'x1')];
    const y = await start(a, Y, gy, 'y');
    // Y, queued after both X runs, is claimed next to one X: the second X was passed over.
    const firstX = await waitUntil('one X and Y claimed', async () => {
      const c = await claimedOf(db, [...xs, y]);
      assert.ok(c.filter((id) => xs.includes(id)).length <= 1, `both X runs claimed: ${c.join(', ')}`);
      return c.length === 2 && c.find((id) => xs.includes(id));
    });
    const secondX = xs.find((id) => id !== firstX)!;
    assert.equal((await queueStates(db, [secondX])).get(secondX), 'queued');
    assert.equal((await timing(b, secondX)).status, 'pending');
    // The first X and Y execute at the same time.
    await waitUntil('the first X and Y running', async () => {
      const [p, q] = await Promise.all([timing(a, firstX), timing(b, y)]);
      return p.status === 'running' && q.status === 'running';
    });
    assert.equal((await queueStates(db, [secondX])).get(secondX), 'queued');

    writeFileSync(gx[xs.indexOf(firstX)]!, '');
    await waitUntil('the second X claimed once the first finished', async () => {
      const states = await queueStates(db, xs);
      assert.ok(
        states.get(firstX) === 'done' || states.get(secondX) === 'queued',
        JSON.stringify([...states]),
      );
      return states.get(secondX) === 'claimed';
    });
    assert.equal((await timing(a, firstX)).status, 'completed');
    assert.equal((await timing(a, y)).status, 'running');
    writeFileSync(gx[xs.indexOf(secondX)]!, '');
    writeFileSync(gy, '');
    for (const id of [...xs, y])
      await waitUntil(`run ${id} completed`, async () => (await timing(b, id)).status === 'completed');
    assertSerial(await Promise.all(xs.map((id) => timing(a, id))));
  });
});
