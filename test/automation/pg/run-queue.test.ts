// The shared run queue with two queue instances ("nodes") on one private PostgreSQL: every run
// claimed by exactly one node, wakes by NOTIFY, lease takeover after a node stops renewing,
// cancel reaching the owner, done reaching a waiter on the other node, concurrency limits with
// both nodes claiming at once and behind a long queue of runs over a limit, and a PostgreSQL
// restart the same instances live through. Waits are on events and state; the only clock
// involved is the (short) lease the takeover waits out.
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { migrate } from '../../../src/automation/pg/migrations.js';
import { DatabaseUnavailableError, PgDatabase } from '../../../src/automation/pg/pool.js';
import { PgRunQueue, type ClaimedRun, type RunQueueOptions } from '../../../src/automation/pg/run-queue.js';
import { queuePort } from '../../../src/automation/pg/queue/port.js';
import { PgRunStore } from '../../../src/automation/pg/stores/runs.js';
import type { RunEnd } from '../../../src/automation/runs/queue.js';
import { emptyDetail, type RunEvent, type RunRecord } from '../../../src/automation/runs/types.js';
import { PgBlobStore } from '../../../src/automation/pg/blob-store.js';
import { contractRun } from '../contracts/run-store.contract.js';
import { postgresSkip, startPostgres, type PostgresServer } from '../../helpers/postgres.js';
import { waitUntil, withinHang } from '../../helpers/wait.js';

interface Node {
  db: PgDatabase;
  queue: PgRunQueue;
}

describe('PostgreSQL run queue, two nodes', { skip: postgresSkip }, () => {
  let server: PostgresServer;
  const open: Node[] = [];
  before(async () => {
    server = await startPostgres();
  });
  after(async () => {
    for (const n of open) {
      await n.queue.close();
      await n.db.close();
    }
    await server?.stop();
  });

  async function cluster(
    options: Partial<RunQueueOptions> = {},
  ): Promise<{ a: Node; b: Node; db: PgDatabase }> {
    const url = await server.createDatabase();
    const nodes: Node[] = [];
    for (const name of ['node-a', 'node-b']) {
      const db = new PgDatabase({ url, poolSize: 4 });
      if (nodes.length === 0) await migrate(db);
      const queue = new PgRunQueue(db, { nodeId: name, leaseMs: 30_000, ...options });
      await queue.start();
      const node = { db, queue };
      nodes.push(node);
      open.push(node);
    }
    return { a: nodes[0]!, b: nodes[1]!, db: nodes[0]!.db };
  }

  let seq = 0;
  /** Run rows as the run store writes them, then queued; their ids in queue order. */
  async function enqueueRuns(node: Node, n: number, tenant = 't1', automation = 'wf_a'): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const id = `run_${++seq}`;
      await node.db.query(
        `INSERT INTO runs (id, tenant, automation_id, type, status, trigger_type, triggered_by, created_at,
           sample_rank, record)
         VALUES ($1, $2, $3, 'workflow', 'pending', 'api', 'u', $4, 0.5, '{}')`,
        [id, tenant, automation, Date.now()],
      );
      assert.equal(await node.queue.enqueue(id), true);
      ids.push(id);
    }
    return ids;
  }

  /** Claims in batches until the queue is empty for this node. */
  async function drain(node: Node, batch: number): Promise<ClaimedRun[]> {
    const all: ClaimedRun[] = [];
    for (;;) {
      const got = await node.queue.claim(batch);
      if (got.length === 0) return all;
      all.push(...got);
    }
  }

  it('queuedCount sees the runs every node queued, up to its bound, and not claimed ones', async () => {
    const { a, b } = await cluster();
    await enqueueRuns(a, 3);
    await enqueueRuns(b, 2);
    assert.equal(await a.queue.queuedCount(100), 5);
    assert.equal(await b.queue.queuedCount(100), 5);
    assert.equal(await b.queue.queuedCount(4), 4);
    assert.equal((await a.queue.claim(2)).length, 2);
    assert.equal(await b.queue.queuedCount(100), 3);
  });
  /** The first takeover `node` claims, claiming on every wake (its expiry check wakes it). */
  function takeoverBy(node: Node): Promise<ClaimedRun> {
    const takeover = new Promise<ClaimedRun>((resolve, reject) => {
      const onWake = () => {
        node.queue.claim(1).then((got) => {
          const t = got.find((c) => c.takeover);
          if (!t) return;
          node.queue.off('wake', onWake);
          resolve(t);
        }, reject);
      };
      node.queue.on('wake', onWake);
    });
    return withinHang(`the takeover by ${node.queue.nodeId}`, takeover);
  }

  it('a queued run wakes the other node, and every run is claimed by exactly one node', async () => {
    const { a, b, db } = await cluster();
    const woken = once(b.queue, 'wake');
    const [first] = await enqueueRuns(a, 1);
    await withinHang('the wake notification on node b', woken);
    const claimedByB = await b.queue.claim(5);
    assert.deepEqual(
      claimedByB.map((c) => [c.runId, c.attempt, c.takeover]),
      [[first, 1, false]],
    );

    const ids = await enqueueRuns(a, 200);
    // Each node takes a batch first (so both have some), then both race for the rest.
    const headA = await a.queue.claim(3);
    const headB = await b.queue.claim(3);
    const [restA, restB] = await Promise.all([drain(a, 7), drain(b, 7)]);
    const byA = [...headA, ...restA].map((c) => c.runId);
    const byB = [...headB, ...restB].map((c) => c.runId);
    assert.ok(byA.length > 0 && byB.length > 0, `a claimed ${byA.length}, b ${byB.length}`);
    const all = [...byA, ...byB];
    assert.equal(new Set(all).size, all.length, 'a run was claimed twice');
    assert.deepEqual([...all].sort(), [...ids].sort());
    // The table agrees: each row names the node that claimed it, first attempt.
    const { rows } = await db.query<{ id: string; node: string; attempt: number }>(
      "SELECT id, node, attempt FROM runs WHERE queue_state = 'claimed' AND id <> $1",
      [first],
    );
    assert.equal(rows.length, 200);
    const owner = new Map(rows.map((r) => [r.id, r.node]));
    for (const id of byA) assert.equal(owner.get(id), 'node-a');
    for (const id of byB) assert.equal(owner.get(id), 'node-b');
    assert.ok(rows.every((r) => r.attempt === 1));
  });

  it('a node that stops renewing has its run taken over once the lease expires', async () => {
    const { a, b, db } = await cluster({ leaseMs: 1500 });
    const [id] = await enqueueRuns(a, 1);
    const [claim] = await a.queue.claim(1);
    assert.equal(claim?.runId, id);
    // Renewing moves the lease forward (on the database clock).
    const lease = async () =>
      (await db.query<{ at: string }>('SELECT lease_expires_at::text AS at FROM runs WHERE id = $1', [id]))
        .rows[0]!.at;
    const before = await lease();
    await waitUntil('a renewal to move the lease', async () => {
      await a.queue.renew();
      return (await lease()) > before;
    });

    // Node a stops (timers and listener; its lease is left to expire). Node b claims on every
    // wake; its expiry check wakes it once the lease has expired.
    await a.queue.close();
    const taken = await takeoverBy(b);
    assert.deepEqual(
      { runId: taken.runId, previousNode: taken.previousNode, attempt: taken.attempt },
      { runId: id, previousNode: 'node-a', attempt: 2 },
    );
    // The old owner is fenced: its renewal reports the run lost, and it cannot complete it.
    const lost = once(a.queue, 'lost');
    assert.deepEqual(await a.queue.renew(), [id]);
    assert.deepEqual((await lost)[0], { runId: id });
    assert.equal(await a.queue.complete(id!, 'completed'), false);
    assert.equal(await b.queue.complete(id!, 'completed'), true);
  });

  it('createQueued stores and queues a run in one commit; completeWith writes its end only for the node that holds it', async () => {
    const { a, b, db } = await cluster({ leaseMs: 1500 });
    const store = new PgRunStore(db);
    const run = contractRun('t1', 1, { status: 'pending', startedAt: null, completedAt: null, error: null });
    const detail = emptyDetail();
    const at = new Date().toISOString();
    const created: RunEvent[] = [
      { seq: 1, type: 'run.created', timestamp: at },
      { seq: 2, type: 'run.queued', timestamp: at },
    ];
    const woken = once(b.queue, 'wake');
    await a.queue.createQueued(run, detail, created);
    await withinHang('the wake notification on node b', woken);
    assert.deepEqual(await store.get(run.id), run);
    assert.deepEqual(await store.getDetail(run.id), detail);
    assert.deepEqual(await store.events(run.id), created);
    const [claim] = await a.queue.claim(1);
    assert.equal(claim?.runId, run.id);

    // Node a stops renewing and node b takes the run over; a has not heard (no renewal since),
    // so only the database can refuse a's end.
    await a.queue.close();
    assert.equal((await takeoverBy(b)).runId, run.id);
    const endOf = (node: string): RunEnd => ({
      record: { ...run, status: 'completed' as const, completedAt: run.createdAt + 1, output: { node } },
      detail: { ...detail, trace: [{ type: node }] },
      events: [{ seq: 3, type: `run.completed on ${node}`, timestamp: at, status: 'completed' }],
    });
    assert.equal(await a.queue.completeWith(run.id, 'completed', endOf('a')), false);
    assert.deepEqual(await store.get(run.id), run, 'nothing of the old owner’s end is written');
    assert.deepEqual(await store.getDetail(run.id), detail);
    assert.deepEqual(await store.events(run.id), created);

    // The owner's end, sent twice at once (as a retry would): the first to commit writes all of
    // its end, the other nothing, and both say done.
    const waiting = b.queue.waitForDone(run.id);
    const ends = [endOf('b'), endOf('b again')];
    assert.deepEqual(await Promise.all(ends.map((e) => b.queue.completeWith(run.id, 'completed', e))), [
      true,
      true,
    ]);
    assert.deepEqual(await withinHang('the done notification', waiting), {
      runId: run.id,
      status: 'completed',
    });
    const stored = await store.get(run.id);
    const end = ends.find((e) => JSON.stringify(e.record.output) === JSON.stringify(stored?.output));
    assert.ok(end, 'one of the two ends is stored');
    assert.deepEqual(stored, end.record);
    assert.deepEqual(await store.getDetail(run.id), end.detail);
    assert.deepEqual(await store.events(run.id), [...created, ...end.events]);
    const { rows } = await db.query(
      'SELECT queue_state, node, attempt, lease_expires_at FROM runs WHERE id = $1',
      [run.id],
    );
    assert.deepEqual(rows, [{ queue_state: 'done', node: 'node-b', attempt: 2, lease_expires_at: null }]);
  });

  it('an end stores its output content in its own statement, only when it is written, each content once', async () => {
    const { a, b, db } = await cluster({ leaseMs: 1500 });
    const blobs = new PgBlobStore(db);
    const content = (text: string) => {
      const bytes = Buffer.from(text);
      return { sha256: createHash('sha256').update(bytes).digest('hex'), content: bytes };
    };
    const stored = await blobs.write(Readable.from([Buffer.from('stored before')]));
    const at = new Date().toISOString();
    const newRun = async (n: number) => {
      const run = contractRun('t1', n, {
        status: 'pending',
        startedAt: null,
        completedAt: null,
        error: null,
      });
      await a.queue.createQueued(run, emptyDetail(), [{ seq: 1, type: 'run.created', timestamp: at }]);
      return run;
    };
    const endOf = (run: RunRecord, files: { sha256: string; content: Buffer }[]): RunEnd => ({
      record: {
        ...run,
        status: 'completed',
        completedAt: run.createdAt + 1,
        files: files.map((f, i) => ({
          name: `out${i}.md`,
          role: 'output' as const,
          path: `output/out${i}.md`,
          stepName: null,
          contentType: 'text/markdown',
          size: f.content.length,
          sha256: f.sha256,
        })),
      },
      detail: emptyDetail(),
      events: [{ seq: 2, type: 'run.completed', timestamp: at, status: 'completed' }],
      blobs: files,
    });
    const read = async (sha256: string) => Buffer.concat(await (await blobs.read(sha256)).toArray());

    // Taken over: the old owner's end writes nothing, its output content included.
    const lost = await newRun(100);
    assert.equal((await a.queue.claim(1))[0]?.runId, lost.id);
    await a.queue.close();
    assert.equal((await takeoverBy(b)).runId, lost.id);
    const lostOutput = content('the old owner’s output');
    assert.equal(await a.queue.completeWith(lost.id, 'completed', endOf(lost, [lostOutput])), false);
    assert.equal(await blobs.stat(lostOutput.sha256), undefined);

    // Two ends in one statement with the same new content, and content stored already: each
    // content is stored once, the stored one kept, and every run holds what it names.
    const other = await newRun(101);
    assert.equal((await b.queue.claim(1))[0]?.runId, other.id);
    const shared = content('the same report');
    const already = { sha256: stored.sha256, content: Buffer.from('stored before') };
    assert.deepEqual(
      await Promise.all([
        b.queue.completeWith(lost.id, 'completed', endOf(lost, [shared, already])),
        b.queue.completeWith(other.id, 'completed', endOf(other, [shared])),
      ]),
      [true, true],
    );
    assert.deepEqual(await read(shared.sha256), shared.content);
    assert.deepEqual(await read(stored.sha256), Buffer.from('stored before'));
    const { rows } = await db.query<{ sha256: string; n: string }>(
      'SELECT sha256, count(*) AS n FROM blobs WHERE sha256 = ANY($1) GROUP BY sha256 ORDER BY sha256',
      [[shared.sha256, stored.sha256]],
    );
    assert.deepEqual(
      rows.map((r) => [r.sha256, Number(r.n)]),
      [shared.sha256, stored.sha256].sort().map((sha) => [sha, 1]),
    );
    const holds = await db.query<{ holder: string; sha256: string }>(
      'SELECT holder, sha256 FROM blob_holds ORDER BY holder, sha256',
    );
    assert.deepEqual(
      holds.rows,
      [
        { holder: `run:${lost.id}`, sha256: shared.sha256 },
        { holder: `run:${lost.id}`, sha256: stored.sha256 },
        { holder: `run:${other.id}`, sha256: shared.sha256 },
      ].sort((x, y) => (x.holder + x.sha256 < y.holder + y.sha256 ? -1 : 1)),
    );
  });

  it('a waiter on the node that wrote a run’s end gets its final record from that end; on another node, none', async () => {
    const { a, b } = await cluster();
    const at = new Date().toISOString();
    const run = contractRun('t1', 200, {
      status: 'pending',
      startedAt: null,
      completedAt: null,
      error: null,
    });
    await a.queue.createQueued(run, emptyDetail(), [{ seq: 1, type: 'run.created', timestamp: at }]);
    const [portA, portB] = [queuePort(a.queue), queuePort(b.queue)];
    const here = portA.waitForDone(run.id);
    const there = portB.waitForDone(run.id);
    assert.equal((await a.queue.claim(1))[0]?.runId, run.id);
    const end: RunEnd = {
      record: { ...run, status: 'completed', completedAt: run.createdAt + 1, output: { ok: true } },
      detail: emptyDetail(),
      events: [{ seq: 2, type: 'run.completed', timestamp: at, status: 'completed' }],
    };
    assert.equal(await a.queue.completeWith(run.id, 'completed', end), true);
    assert.deepEqual(await withinHang('the waiter on the ending node', here), end.record);
    assert.equal(await withinHang('the waiter on the other node', there), undefined);
  });

  it('cancel from any node reaches the owner; a queued run is taken out of the queue', async () => {
    const { a, b } = await cluster();
    const [running, queued] = await enqueueRuns(a, 2);
    const [claim] = await a.queue.claim(1);
    assert.equal(claim?.runId, running);
    const heard = once(a.queue, 'cancel');
    assert.deepEqual(await b.queue.cancel(running!), { state: 'signalled', node: 'node-a' });
    assert.deepEqual((await withinHang('the cancel on node a', heard))[0], { runId: running });

    const waiting = a.queue.waitForDone(queued!);
    assert.deepEqual(await b.queue.cancel(queued!), { state: 'dequeued' });
    assert.deepEqual(await withinHang('the done of the dequeued run', waiting), {
      runId: queued,
      status: 'cancelled',
    });
    assert.deepEqual(await b.queue.claim(5), []);
    assert.deepEqual(await b.queue.cancel('run_unknown'), { state: 'unknown' });
    assert.equal(await a.queue.complete(running!, 'cancelled'), true);
    assert.deepEqual(await b.queue.cancel(running!), { state: 'finished' });
  });

  it('a node waiting for a run hears when the other node completes it', async () => {
    const { a, b, db } = await cluster();
    const [id] = await enqueueRuns(a, 1);
    const waiting = b.queue.waitForDone(id!);
    const heard = once(b.queue, 'done');
    const [claim] = await a.queue.claim(1);
    assert.equal(claim?.runId, id);
    assert.equal(await a.queue.complete(id!, 'completed'), true);
    assert.deepEqual(await withinHang('the done on node b', waiting), { runId: id, status: 'completed' });
    assert.deepEqual((await heard)[0], { runId: id, status: 'completed' });
    // Already done: answered from the row (its status column, which the run store keeps).
    await db.query("UPDATE runs SET status = 'completed' WHERE id = $1", [id]);
    assert.deepEqual(await b.queue.waitForDone(id!), { runId: id, status: 'completed' });
  });

  it('a waiter for a run its node stored is answered by the done notification, heard before or after, without a read', async () => {
    const { a, b, db } = await cluster();
    // Counts node a's reads of done rows (waitForDone's check).
    let doneReads = 0;
    const query = a.db.query.bind(a.db);
    a.db.query = (text: string, values?: unknown[]) => {
      if (text === "SELECT id, status FROM runs WHERE id = ANY($1::text[]) AND queue_state = 'done'")
        doneReads++;
      return query(text, values);
    };
    const stored = async (n: number) => {
      const run = { ...contractRun('t1', 9100 + n), status: 'pending' as const };
      await a.queue.createQueued(run, emptyDetail(), []);
      return run.id;
    };
    const completeOnB = async (id: string) => {
      assert.deepEqual(
        (await b.queue.claim(1)).map((c) => c.runId),
        [id],
      );
      assert.equal(await b.queue.complete(id, 'completed'), true);
    };
    // Done before anyone waits: a heard it, and answers a later waiter from what it heard.
    const early = await stored(1);
    const heard = new Promise<void>((resolve) => a.queue.on('done', (e) => e.runId === early && resolve()));
    await completeOnB(early);
    await withinHang('the done on node a', heard);
    assert.deepEqual(await a.queue.waitForDone(early), { runId: early, status: 'completed' });
    // Waiting before it is done.
    const late = await stored(2);
    const waiting = a.queue.waitForDone(late);
    await completeOnB(late);
    assert.deepEqual(await withinHang('the done of the later run', waiting), {
      runId: late,
      status: 'completed',
    });
    assert.equal(doneReads, 0, 'no row was read');

    // Node a's listening connection broken: a notification may have been missed, so the waiter
    // of a run stored before reads its row.
    const cut = await stored(3);
    const { rows } = await db.query<{ pid: number }>(
      // The server holds the other tests' nodes too, each on its own database.
      'SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()',
      ['sluice-run-queue:node-a'],
    );
    const back = once(a.queue, 'listening');
    await db.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
    await withinHang('node a to listen again', back);
    const reads = doneReads;
    const waitingCut = a.queue.waitForDone(cut);
    await completeOnB(cut);
    assert.deepEqual(await withinHang('the done of the run stored before', waitingCut), {
      runId: cut,
      status: 'completed',
    });
    assert.ok(doneReads > reads, 'its row was read');
  });

  it('per-tenant and per-automation limits hold with both nodes claiming at once', async () => {
    const { a, b, db } = await cluster({ tenantConcurrency: 3, automationConcurrency: 2 });
    await enqueueRuns(a, 5, 't1', 'wf_1');
    await enqueueRuns(a, 5, 't1', 'wf_2');
    await enqueueRuns(a, 5, 't2', 'wf_3');
    const running = async () => {
      const { rows } = await db.query<{ tenant: string; automation_id: string; n: string }>(
        `SELECT tenant, automation_id, count(*) AS n FROM runs WHERE queue_state = 'claimed'
         GROUP BY tenant, automation_id`,
      );
      const tenant = new Map<string, number>();
      const automation = new Map<string, number>();
      for (const r of rows) {
        tenant.set(r.tenant, (tenant.get(r.tenant) ?? 0) + Number(r.n));
        automation.set(r.automation_id, Number(r.n));
      }
      return { tenant, automation };
    };
    const owned = new Map<string, Node>();
    for (let round = 0; round < 6; round++) {
      const [ga, gb] = await Promise.all([a.queue.claim(10), b.queue.claim(10)]);
      for (const c of ga) owned.set(c.runId, a);
      for (const c of gb) owned.set(c.runId, b);
      const now = await running();
      for (const [t, n] of now.tenant) assert.ok(n <= 3, `round ${round}: tenant ${t} runs ${n}`);
      for (const [w, n] of now.automation) assert.ok(n <= 2, `round ${round}: automation ${w} runs ${n}`);
      if (round === 0) {
        // Both nodes asked for plenty: every limit is reached, none exceeded.
        assert.equal(now.tenant.get('t1'), 3);
        assert.equal(now.tenant.get('t2'), 2);
      }
      // One run of each tenant ends, freeing slots for the next round.
      for (const t of ['t1', 't2']) {
        const { rows } = await db.query<{ id: string }>(
          "SELECT id FROM runs WHERE queue_state = 'claimed' AND tenant = $1 ORDER BY id LIMIT 1",
          [t],
        );
        const id = rows[0]?.id;
        if (id) assert.equal(await owned.get(id)!.queue.complete(id, 'completed'), true);
      }
    }
  });

  it('runs over a limit at the head of the queue, more than a claim window, do not hide the runs behind them', async () => {
    const { a } = await cluster({ tenantConcurrency: 1 });
    const t1 = await enqueueRuns(a, 70, 't1', 'wf_1');
    const [t2] = await enqueueRuns(a, 1, 't2', 'wf_1');
    // One round's window (64 rows) is t1's alone and yields one run; the next round, which
    // leaves t1 out (at its limit now), finds t2's.
    const got = await a.queue.claim(2);
    assert.deepEqual(
      got.map((c) => c.runId),
      [t1[0], t2],
    );
    // Both tenants are at their limit: nothing more, however many are asked for.
    assert.deepEqual(await a.queue.claim(5), []);
    assert.equal(await a.queue.complete(t1[0]!, 'completed'), true);
    assert.deepEqual(
      (await a.queue.claim(5)).map((c) => c.runId),
      [t1[1]],
    );
  });

  it('PostgreSQL restarted: calls fail as database_unavailable, then the same instances work again', async () => {
    const { a, b } = await cluster();
    const [before] = await enqueueRuns(a, 1);
    const relistenA = once(a.queue, 'listening');
    const relistenB = once(b.queue, 'listening');
    await server.shutdown();
    await assert.rejects(a.queue.claim(1), DatabaseUnavailableError);
    await assert.rejects(b.queue.enqueue('run_x'), DatabaseUnavailableError);
    await assert.rejects(b.queue.cancel(before!), DatabaseUnavailableError);
    await server.start();
    // Both listeners reconnect and LISTEN again by themselves.
    await withinHang('both listeners to reconnect', Promise.all([relistenA, relistenB]));
    const claimed = await waitUntil('a claim after the restart', async () => {
      try {
        const got = await a.queue.claim(1);
        return got.length > 0 ? got : false;
      } catch (err) {
        if (err instanceof DatabaseUnavailableError) return false;
        throw err;
      }
    });
    assert.equal(claimed[0]!.runId, before);
    // Notifications flow again: a run queued on a wakes b.
    const woken = once(b.queue, 'wake');
    const [after] = await enqueueRuns(a, 1);
    await withinHang('a wake after the restart', woken);
    assert.deepEqual(
      (await b.queue.claim(1)).map((c) => c.runId),
      [after],
    );
  });

  it('stored runs that were never queued are queued by requeueStranded, once; others are left alone', async () => {
    const { a, b, db } = await cluster();
    const row = (id: string, status: string, cancel = false) =>
      db.query(
        `INSERT INTO runs (id, tenant, automation_id, type, status, trigger_type, triggered_by, created_at,
           sample_rank, record, cancel_requested)
         VALUES ($1, 't1', 'wf_a', 'workflow', $2, 'api', 'u', $3, 0.5, '{}', $4)`,
        [id, status, Date.now(), cancel],
      );
    await row('stranded_1', 'pending');
    await row('finished_1', 'completed');
    await row('cancelled_1', 'pending', true);
    const [queued] = await enqueueRuns(a, 1);
    const woken = once(b.queue, 'wake');
    assert.equal(await a.queue.requeueStranded(), 1);
    await withinHang('the wake on node b', woken);
    assert.equal(await b.queue.requeueStranded(), 0);
    const claimed = (await drain(b, 10)).map((c) => c.runId).sort();
    assert.deepEqual(claimed, [queued, 'stranded_1'].sort());
  });

  it('runs started together share a statement; one that cannot be stored fails alone', async () => {
    const { a, b } = await cluster();
    const store = new PgRunStore(a.db);
    const run = (n: number) => ({ ...contractRun('t1', 9000 + n), status: 'pending' as const });
    const first = run(1);
    await a.queue.createQueued(first, emptyDetail(), []);
    const [x, dup, y] = [run(2), first, run(3)];
    const results = await Promise.allSettled([
      a.queue.createQueued(x, emptyDetail(), []),
      a.queue.createQueued({ ...dup, output: 'again' }, emptyDetail(), []),
      a.queue.createQueued(y, emptyDetail(), []),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.deepEqual(await store.get(x.id), x);
    assert.deepEqual(await store.get(y.id), y);
    assert.deepEqual(await store.get(first.id), first, 'the duplicate changed nothing');
    const claimed = (await drain(b, 2)).map((c) => c.runId).sort();
    assert.deepEqual(claimed, [first.id, x.id, y.id].sort());
  });
});
