// Commits that acknowledge nothing are asynchronous on PostgreSQL (docs/automation.md, "What a
// crash at each point loses"): a claim on its own and the progress of a run this node runs. These
// tests hold the guarantees that make that safe: a claim that a PostgreSQL crash lost fences the
// node that made it (never claimed again by it under the same attempt, its end matches nothing),
// an end that was answered survives a crash of the server (SIGKILL of the postmaster and its
// backends) with every earlier write of its run, and only writes of runs running here go
// asynchronously.
import * as assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { migrate } from '../../../src/automation/pg/migrations.js';
import { PgDatabase, type Queryable } from '../../../src/automation/pg/pool.js';
import { PgRunQueue } from '../../../src/automation/pg/run-queue.js';
import { FLUSH_RUN } from '../../../src/automation/pg/queue/sql.js';
import { PgRunStore } from '../../../src/automation/pg/stores/runs.js';
import { RunWriteQueue } from '../../../src/automation/pg/stores/run-writes.js';
import type { RunEnd } from '../../../src/automation/runs/queue.js';
import { emptyDetail, type RunEvent, type RunRecord } from '../../../src/automation/runs/types.js';
import { contractRun } from '../contracts/run-store.contract.js';
import { postgresSkip, startPostgres, type PostgresServer } from '../../helpers/postgres.js';
import { waitUntil } from '../../helpers/wait.js';
import { DatabaseUnavailableError } from '../../../src/automation/pg/pool.js';

type Node = { db: PgDatabase; queue: PgRunQueue };

describe('PostgreSQL asynchronous commits', { skip: postgresSkip }, () => {
  let server: PostgresServer | undefined;
  const closers: (() => Promise<void>)[] = [];
  after(async () => {
    for (const close of closers.reverse()) await close();
  });

  /** Nodes on a new database of the file's server (started by the first call). */
  async function nodes(names: string[]): Promise<Node[]> {
    if (!server) {
      const started = (server = await startPostgres());
      closers.push(() => started.stop());
    }
    const url = await server.createDatabase();
    const made: Node[] = [];
    for (const name of names) {
      const db = new PgDatabase({ url, poolSize: 4 });
      if (made.length === 0) await migrate(db);
      const queue = new PgRunQueue(db, { nodeId: name, leaseMs: 30_000 });
      await queue.start();
      closers.push(async () => {
        await queue.close();
        await db.close();
      });
      made.push({ db, queue });
    }
    return made;
  }

  /** The node's statements as sent (`sent`), through `recording`; the database otherwise as it is. */
  function recorded(db: PgDatabase): { sent: string[]; recording: Queryable } {
    const sent: string[] = [];
    return {
      sent,
      recording: {
        query: (text, values) => {
          sent.push(text);
          return db.query(text, values);
        },
      },
    };
  }

  /** A run store on the node's database whose statements are recorded; its runs running here are the node's. */
  function recordedStore(node: Node): { sent: string[]; store: PgRunStore } {
    const { sent, recording } = recorded(node.db);
    const store = new PgRunStore(recording as unknown as PgDatabase, {
      runningHere: (id) => node.queue.runsHere(id),
    });
    return { sent, store };
  }

  let n = 0;
  async function queued(node: Node): Promise<{ run: RunRecord; created: RunEvent[] }> {
    const run = contractRun('t1', ++n, {
      status: 'pending',
      startedAt: null,
      completedAt: null,
      error: null,
    });
    const at = new Date().toISOString();
    const created: RunEvent[] = [{ seq: 1, type: 'run.created', timestamp: at }];
    await node.queue.createQueued(run, emptyDetail(), created);
    return { run, created };
  }

  const endOf = (run: RunRecord, seq: number): RunEnd => ({
    record: { ...run, status: 'completed', completedAt: run.createdAt + 1, output: { ok: true } },
    detail: emptyDetail(),
    events: [{ seq, type: 'run.completed', timestamp: new Date().toISOString(), status: 'completed' }],
  });

  it('a claim lost in a crash: its node does not claim the run again, is told it lost it, and its end writes nothing', async () => {
    const [a, b] = await nodes(['node-a', 'node-b']);
    const { run } = await queued(a!);
    const [claim] = await a!.queue.claim(1);
    assert.deepEqual({ runId: claim?.runId, attempt: claim?.attempt }, { runId: run.id, attempt: 1 });
    // What PostgreSQL restarted without the claim's commit holds: the row as before the claim.
    await a!.db.query(
      "UPDATE runs SET queue_state = 'queued', node = NULL, lease_expires_at = NULL, attempt = 0 WHERE id = $1",
      [run.id],
    );
    assert.deepEqual(await a!.queue.claim(1), [], 'a node never claims a run it holds');
    assert.equal(await a!.queue.completeWith(run.id, 'completed', endOf(run, 2)), false);
    const { rows } = await a!.db.query('SELECT queue_state, attempt FROM runs WHERE id = $1', [run.id]);
    assert.deepEqual(rows, [{ queue_state: 'queued', attempt: 0 }]);
    const [again] = await b!.queue.claim(1);
    assert.deepEqual({ runId: again?.runId, attempt: again?.attempt }, { runId: run.id, attempt: 1 });
    assert.equal(await b!.queue.completeWith(run.id, 'completed', endOf(run, 2)), true);

    // A second run's claim lost the same way: the node's renewal reports it lost.
    const second = await queued(a!);
    assert.equal((await a!.queue.claim(1))[0]?.runId, second.run.id);
    await a!.db.query(
      "UPDATE runs SET queue_state = 'queued', node = NULL, lease_expires_at = NULL, attempt = 0 WHERE id = $1",
      [second.run.id],
    );
    assert.deepEqual(await a!.queue.renew(), [second.run.id]);
    assert.equal(a!.queue.runsHere(second.run.id), false);
  });

  it('an answered end survives a crash of PostgreSQL, with the claim and progress committed before it', async () => {
    const [a] = await nodes(['node-a']);
    const store = new PgRunStore(a!.db, { runningHere: (id) => a!.queue.runsHere(id) });
    const { run, created } = await queued(a!);
    const [claim] = await a!.queue.claim(1);
    assert.equal(claim?.runId, run.id);
    const running: RunRecord = { ...run, status: 'running', startedAt: run.createdAt };
    const started: RunEvent = { seq: 2, type: 'run.started', timestamp: new Date().toISOString() };
    await Promise.all([store.update(run, running), store.appendEvent(run.id, started)]);
    const end = endOf(running, 3);
    assert.equal(await a!.queue.completeWith(run.id, 'completed', end), true);

    await server!.kill9();
    await server!.start();
    const done = await waitUntil('the database back after the crash', async () => {
      try {
        return (await a!.db.query('SELECT queue_state, attempt FROM runs WHERE id = $1', [run.id])).rows;
      } catch (err) {
        if (err instanceof DatabaseUnavailableError) return false;
        throw err;
      }
    });
    assert.deepEqual(done, [{ queue_state: 'done', attempt: 1 }]);
    assert.deepEqual(await store.get(run.id), end.record);
    assert.deepEqual(await store.events(run.id), [...created, started, ...end.events]);
  });

  it('a start answered at its end only commits asynchronously; committed() makes it durable, and fails for one a crash lost', async () => {
    const [a] = await nodes(['node-a']);
    const sent: string[] = [];
    // The node's statements as sent, the database otherwise as it is.
    const recording = new Proxy(a!.db, {
      get(target, key, receiver) {
        if (key !== 'query') return Reflect.get(target, key, receiver) as unknown;
        return (text: string, values?: unknown[]) => {
          sent.push(text);
          return target.query(text, values);
        };
      },
    });
    const queue = new PgRunQueue(recording, { nodeId: 'node-r', leaseMs: 30_000 });
    await queue.start();
    closers.push(() => queue.close());
    const asyncCommit = (text: string) => text.includes("set_config('synchronous_commit', 'off', true)");
    const newRun = () =>
      contractRun('t1', ++n, { status: 'pending', startedAt: null, completedAt: null, error: null });
    const created = (): RunEvent[] => [{ seq: 1, type: 'run.created', timestamp: new Date().toISOString() }];

    const answered = newRun();
    await queue.createQueued(answered, emptyDetail(), created());
    assert.deepEqual(sent.map(asyncCommit), [false], 'a start answered at once');
    await queue.committed(answered.id);
    // The node keeps no list of runs not yet flushed: committed() always sends the flush.
    assert.deepEqual(sent.slice(1), [FLUSH_RUN], 'one flush statement');

    sent.length = 0;
    const atEnd = newRun();
    const claimed = await queue.createClaimed(atEnd, emptyDetail(), created(), { answeredAtEnd: true });
    assert.equal(claimed?.runId, atEnd.id);
    assert.deepEqual(sent.map(asyncCommit), [true], 'a start answered at its end');
    await queue.committed(atEnd.id);
    assert.deepEqual(sent.slice(1), [FLUSH_RUN], 'a synchronous commit that flushes the creation');
    const { rows } = await a!.db.query('SELECT id FROM runs WHERE id = $1', [atEnd.id]);
    assert.equal(rows.length, 1, 'the run is stored');

    // Ended here: the end's synchronous commit made the creation durable; the flush finds the row.
    const ended = newRun();
    await queue.createClaimed(ended, emptyDetail(), created(), { answeredAtEnd: true });
    assert.equal(await queue.completeWith(ended.id, 'completed', endOf(ended, 2)), true);
    await queue.committed(ended.id);

    // PostgreSQL restarted without the creation's commit: the run is not there, and an answer
    // that would acknowledge it (a synchronous start not ended in time) fails instead.
    const lost = newRun();
    await queue.createQueued(lost, emptyDetail(), created(), { answeredAtEnd: true });
    await a!.db.query('DELETE FROM runs WHERE id = $1', [lost.id]);
    await assert.rejects(queue.committed(lost.id), DatabaseUnavailableError);
  });

  it('progress goes asynchronously only in a batch made of runs this node runs', async () => {
    const [a] = await nodes(['node-a']);
    const { sent, store } = recordedStore(a!);
    const mine = await queued(a!);
    const other = await queued(a!);
    const [claim] = await a!.queue.claim(1);
    assert.equal(claim?.runId, mine.run.id);
    const event = (seq: number): RunEvent => ({ seq, type: 'run.step', timestamp: new Date().toISOString() });
    const asyncCommit = (text: string) => text.includes("set_config('synchronous_commit', 'off', true)");

    await store.appendEvent(mine.run.id, event(2));
    assert.deepEqual(sent.map(asyncCommit), [true], 'a run running here');
    sent.length = 0;
    await store.appendEvent(other.run.id, event(2));
    assert.deepEqual(sent.map(asyncCommit), [false], 'a queued run, not running here');
    sent.length = 0;
    // A run running here: held for PROGRESS_HOLD_MS (see the next case), then sent on its own.
    await Promise.all([store.appendEvent(mine.run.id, event(3)), store.appendEvent(other.run.id, event(3))]);
    assert.deepEqual(sent.map(asyncCommit), [false, true], 'the run not running here first, at once');
    assert.equal((await store.events(mine.run.id)).length, 3);
  });

  it('a batch with a run not running here commits synchronously', async () => {
    const [a] = await nodes(['node-a']);
    const { sent, recording } = recorded(a!.db);
    const mine = await queued(a!);
    const other = await queued(a!);
    const [claim] = await a!.queue.claim(1);
    assert.equal(claim?.runId, mine.run.id);
    const writes = new RunWriteQueue(recording, (id) => a!.queue.runsHere(id));
    const event = (id: string, seq: number) => ({
      runId: id,
      events: [{ seq, type: 'run.step', timestamp: new Date().toISOString() }],
    });
    // Handed to the batcher in one turn: the held write of the run running here and the other.
    const held = writes.write(event(mine.run.id, 2));
    const atOnce = writes.write(event(other.run.id, 2));
    writes.flushHeld();
    await Promise.all([held, atOnce]);
    assert.equal(sent.length, 1, 'one statement');
    assert.ok(!sent[0]!.includes("set_config('synchronous_commit', 'off', true)"), 'synchronous');
  });

  it('holds progress of a run running here for its end, which takes it; sends it when the run goes on', async () => {
    const [a] = await nodes(['node-a']);
    const { sent, store } = recordedStore(a!);
    const short = await queued(a!);
    const long = await queued(a!);
    const claims = await a!.queue.claim(2);
    assert.equal(claims.length, 2);
    const event = (seq: number): RunEvent => ({
      seq,
      type: 'step.completed',
      timestamp: new Date().toISOString(),
    });

    // The short run ends within the hold: its end takes its progress, and no statement is sent.
    const written = store.appendEvent(short.run.id, event(2));
    const taken = store.takeUnwritten(short.run.id);
    assert.deepEqual(
      taken.map((e) => e.seq),
      [2],
    );
    await written;
    assert.deepEqual(store.takeUnwritten(short.run.id), [], 'taken once');
    const end = endOf(short.run, 3);
    assert.equal(
      await a!.queue.completeWith(short.run.id, 'completed', { ...end, events: [...taken, ...end.events] }),
      true,
    );
    assert.deepEqual(sent, [], 'no progress statement for the short run');
    assert.deepEqual(
      (
        await a!.db.query<{ seq: number }>('SELECT seq FROM run_events WHERE run_id = $1 ORDER BY seq', [
          short.run.id,
        ])
      ).rows.map((r) => r.seq),
      [1, 2, 3],
      'its progress written by its end',
    );

    // The long run goes on past the hold: its progress is sent then.
    await store.appendEvent(long.run.id, event(2));
    assert.equal(sent.length, 1);
    assert.deepEqual(
      (await store.events(long.run.id)).map((e) => e.seq),
      [1, 2],
    );
  });
});
