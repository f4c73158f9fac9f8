// Two Sluice automation nodes, each its own process, on one private PostgreSQL and one shared
// registry remote (each node clones it). The steps build on each other: (a) held runs fill both
// nodes (each claims its pool's worth) and finish; list and details read the same on both; (b)
// node A is SIGKILLed with runs in flight, B takes them over once their leases expire and runs
// them (a run.taken_over event, attempt 2), none lost; (c) with B full, a synchronous start on B
// is run by A and answered by B; (d) a run executing on A is cancelled through B; (e) PostgreSQL
// is stopped: requests answer 503 database_unavailable, and succeed again once it is back.
// The lease is 1s (a setting, not a margin): every step waits for the state it needs.
import { after, before, describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unzipSync } from 'fflate';
import pg from 'pg';
import { api, automationNode, gatedWorkflow, registryRemote, TOKEN, type Node } from './nodes.js';
import { postgresSkip, startPostgres, type PostgresServer } from '../../helpers/postgres.js';
import { waitUntil } from '../../helpers/wait.js';
import { FILE_ECHO, workflowManifest } from '../registry-git.js';

const GATED = 'workflows.gated';
/** Writes its input text to output file out.txt. */
const FILE_WRITER: Record<string, string> = {
  'workflows/file-writer/manifest.json': workflowManifest('File writer'),
  'workflows/file-writer/index.js': `export default { steps: [{ name: 'write', async run(ctx) {
    await ctx.files.write('out.txt', ctx.input.text, 'text/plain');
    return { written: true };
  } }] };\n`,
};

describe('automation on two nodes over one PostgreSQL', { skip: postgresSkip }, () => {
  let server: PostgresServer;
  let db: pg.Client;
  let url: string;
  let nodeEnv: Record<string, string>;
  /** A query on a connection of its own (the shared client is cut off when (e) stops the server). */
  const sql = async <R extends pg.QueryResultRow>(text: string, params: unknown[]) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return await client.query<R>(text, params);
    } finally {
      await client.end();
    }
  };
  let dir: string;
  let a: Node;
  let b: Node;
  const gates: string[] = [];
  const gate = () => {
    const path = join(dir, `gate-${gates.length}`);
    gates.push(path);
    return path;
  };
  const start = async (node: Node, gatePath: string, text: string, query = '') => {
    const r = await api(node, 'POST', `/runs${query}`, { target: GATED, input: { gate: gatePath, text } });
    assert.ok(r.status === 201 || r.status === 200, JSON.stringify(r.body));
    return r.body.id as string;
  };
  const dump = async () =>
    process.env.PG_NODES_LOG &&
    console.error(
      JSON.stringify(
        (await sql('SELECT id, queue_state, node, status, attempt FROM runs ORDER BY created_at', [])).rows,
      ),
    );
  const claimed = async (ids: string[]) =>
    (
      await sql<{ id: string; node: string }>(
        `SELECT id, node FROM runs WHERE id = ANY($1) AND queue_state = 'claimed'`,
        [ids],
      )
    ).rows;
  const status = async (node: Node, id: string) => {
    await dump();
    return (await api(node, 'GET', `/runs/${id}`)).body?.execution?.status as string | undefined;
  };

  before(async () => {
    server = await startPostgres();
    url = await server.createDatabase();
    db = new pg.Client({ connectionString: url });
    await db.connect();
    // This client is cut off when the server stops in (e); the test no longer needs it then.
    db.on('error', () => undefined);
    dir = mkdtempSync(join(tmpdir(), 'sluice-pg-nodes-'));
    // The registry remote both nodes clone: three workflows, each released as 1.0.0.
    const remote = registryRemote(dir, {
      [GATED]: gatedWorkflow('gated'),
      'workflows.file-echo': FILE_ECHO,
      'workflows.file-writer': FILE_WRITER,
    });
    nodeEnv = {
      AUTOMATION_DATABASE_URL: url,
      AUTOMATION_REGISTRY_URL: remote,
      AUTOMATION_SEED_BUILTINS: 'false',
      AUTOMATION_POOL_THREADS: '2',
      AUTOMATION_RUN_LEASE: '1s',
      AUTOMATION_CANCEL_GRACE: '300ms',
      AUTOMATION_DATABASE_CONNECT_TIMEOUT: '1s',
    };
    a = automationNode('a', join(dir, 'a'), nodeEnv);
    b = automationNode('b', join(dir, 'b'), nodeEnv);
    await a.start();
    await b.start();
  });

  after(async () => {
    for (const g of gates) writeFileSync(g, '');
    await a?.stop();
    await b?.stop();
    await db?.end().catch(() => undefined);
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('(a) both nodes execute runs; list and details are the same on both', async () => {
    const g = gate();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await start(i % 2 ? b : a, g, `r${i}`));
    // Each node claims at most its pool's worth (2), so four held runs take both nodes.
    const rows = await waitUntil('four runs claimed', async () => {
      await dump();
      const r = await claimed(ids);
      return r.length === 4 && r;
    });
    assert.deepEqual(rows.map((r) => r.node).sort(), ['a', 'a', 'b', 'b']);
    writeFileSync(g, '');
    for (const id of ids)
      await waitUntil(`run ${id} completed`, async () => (await status(a, id)) === 'completed');
    const listA = await api(a, 'GET', '/runs?limit=50');
    const listB = await api(b, 'GET', '/runs?limit=50');
    assert.equal(listA.status, 200);
    assert.deepEqual(listA.body, listB.body);
    for (const id of ids) {
      for (const part of ['', '/events', '/steps']) {
        const [fromA, fromB] = [
          await api(a, 'GET', `/runs/${id}${part}`),
          await api(b, 'GET', `/runs/${id}${part}`),
        ];
        assert.equal(fromA.status, 200);
        assert.deepEqual(fromA.body, fromB.body);
      }
      const da = await api(a, 'GET', `/runs/${id}`);
      assert.deepEqual(da.body.output, { text: `r${ids.indexOf(id)}` });
    }
  });

  test('(b) a killed node’s runs are taken over and finish on the other, none lost', async () => {
    const g = gate();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await start(b, g, `k${i}`));
    const rows = await waitUntil('four runs claimed', async () => {
      const r = await claimed(ids);
      return r.length === 4 && r;
    });
    const onA = rows.filter((r) => r.node === 'a').map((r) => r.id);
    assert.equal(onA.length, 2);
    await a.kill();
    writeFileSync(g, '');
    for (const id of ids)
      await waitUntil(`run ${id} completed`, async () => (await status(b, id)) === 'completed');
    for (const id of onA) {
      const list = (await api(b, 'GET', `/runs/${id}/events`)).body.events as any[];
      const taken = list.filter((e) => e.type === 'run.taken_over');
      assert.equal(taken.length, 1, JSON.stringify(list));
      assert.equal(taken[0].metadata.previousNode, 'a');
      assert.equal(list.filter((e) => e.type === 'run.completed').length, 1);
    }
    const attempts = await db.query<{ id: string; attempt: number; node: string }>(
      'SELECT id, attempt, node FROM runs WHERE id = ANY($1)',
      [ids],
    );
    for (const r of attempts.rows) assert.equal(r.attempt, onA.includes(r.id) ? 2 : 1);
    assert.ok(attempts.rows.every((r) => r.node === 'b'));
  });

  test('(c) a synchronous start on B, run by A, is answered by B; (d) cancel through B of a run on A', async () => {
    // A is down: two held runs fill B; then A comes back and is the only node with room.
    const hold = gate();
    const held = [await start(b, hold, 'h0'), await start(b, hold, 'h1')];
    await waitUntil('B full', async () => (await claimed(held)).length === 2);
    await a.start();
    const g = gate();
    const sync = api(b, 'POST', '/runs?wait_for_completion=60', {
      target: GATED,
      input: { gate: g, text: 's' },
    });
    const running = await waitUntil('the sync run claimed by A', async () => {
      const r = await db.query<{ id: string; node: string }>(
        `SELECT id, node FROM runs WHERE queue_state = 'claimed' AND NOT (id = ANY($1))`,
        [held],
      );
      return r.rows[0];
    });
    assert.equal(running.node, 'a');
    writeFileSync(g, '');
    const answer = await sync;
    assert.equal(answer.status, 200);
    assert.equal(answer.body.execution.status, 'completed');
    assert.deepEqual(answer.body.output, { text: 's' });

    const c = gate();
    const id = await start(b, c, 'c');
    await waitUntil('A runs it', async () => (await status(b, id)) === 'running');
    assert.equal((await claimed([id]))[0]?.node, 'a');
    const cancel = await api(b, 'POST', `/runs/${id}/cancel`);
    assert.ok(cancel.status < 300, JSON.stringify(cancel.body));
    await waitUntil('the run cancelled', async () => (await status(a, id)) === 'cancelled');
    writeFileSync(hold, '');
    for (const h of held)
      await waitUntil(`run ${h} completed`, async () => (await status(a, h)) === 'completed');
  });

  test('(e) PostgreSQL stopped under load: 503 database_unavailable, then success without a restart', async () => {
    const open = gate();
    writeFileSync(open, '');
    // Four clients (two per node) start runs and read them and the list, until told to stop.
    const seen: { node: string; status: number; body: any; at: 'up' | 'down' | 'back' }[] = [];
    const started: string[] = [];
    let phase: 'up' | 'down' | 'back' = 'up';
    let stop = false;
    const client = async (node: Node) => {
      while (!stop) {
        const at = phase;
        const r = await api(node, 'POST', '/runs', { target: GATED, input: { gate: open, text: 'load' } });
        seen.push({ node: node.name, status: r.status, body: r.body, at });
        if (r.status === 201) {
          started.push(r.body.id as string);
          const one = await api(node, 'GET', `/runs/${r.body.id}`);
          seen.push({ node: node.name, status: one.status, body: one.body, at });
        }
        const list = await api(node, 'GET', '/runs?limit=5');
        seen.push({ node: node.name, status: list.status, body: list.body, at });
      }
    };
    const clients = [client(a), client(b), client(a), client(b)];
    const count = (at: string, ok: (s: number) => boolean, node?: string) =>
      seen.filter((x) => x.at === at && ok(x.status) && (!node || x.node === node)).length;
    await waitUntil('requests succeeding', () => count('up', (s) => s < 300) >= 8);
    phase = 'down';
    await server.shutdown();
    await waitUntil('503s from both nodes', () =>
      ['a', 'b'].every((n) => count('down', (s) => s === 503, n) >= 2),
    );
    await server.start();
    phase = 'back';
    await waitUntil('both nodes succeed again', () =>
      ['a', 'b'].every((n) => count('back', (s) => s < 300, n) >= 4),
    );
    stop = true;
    await Promise.all(clients);
    for (const x of seen) {
      assert.ok([200, 201, 503].includes(x.status), JSON.stringify(x));
      if (x.status === 503) {
        assert.equal(x.body.issues[0].code, 'database_unavailable', JSON.stringify(x.body));
        assert.match(x.body.issues[0].message, /PostgreSQL/);
      }
    }
    // Every run that was accepted finishes; none is lost.
    for (const id of started)
      await waitUntil(`run ${id} completed`, async () => (await status(a, id)) === 'completed');
    const r = await api(b, 'POST', '/runs?wait_for_completion=60', {
      target: GATED,
      input: { gate: open, text: 'after' },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.output, { text: 'after' });
  });

  test('(f) files: an upload URL signed by A is taken by B, the file read on A and used by runs from either node', async () => {
    const text = 'bytes shared by two nodes';
    const created = await api(a, 'POST', '/files/uploads', {
      filename: 'notes.txt',
      contentType: 'text/plain',
      size: Buffer.byteLength(text),
      purpose: 'run-input',
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const session = created.body;
    // The same signed URL, sent to node B: the signing secret is the cluster's.
    const onB = b.url + session.url.slice(a.url.length);
    const put = await fetch(onB, { method: 'PUT', headers: session.headers, body: text });
    assert.equal(put.status, 200, await put.text());
    assert.equal((await api(b, 'POST', `/files/uploads/${session.uploadId}/complete`)).status, 200);
    const content = await fetch(`${a.url}/api/v1/files/${session.fileId}/content`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(await content.text(), text);
    const byRef = await api(a, 'POST', '/runs?wait_for_completion=60', {
      target: 'workflows.file-echo',
      input: {},
      files: { doc: { $fileId: session.fileId } },
    });
    assert.equal(byRef.status, 200, JSON.stringify(byRef.body));
    assert.deepEqual(byRef.body.output, { 'doc/notes.txt': text });
    // A multipart start: the part is a temp file on B, put in the blob store for whichever node runs it.
    const form = new FormData();
    form.append('target', 'workflows.file-echo');
    form.append('input', '{}');
    form.append('files.note', new Blob(['a part sent to B'], { type: 'text/plain' }), 'note.txt');
    const multipart = await fetch(`${b.url}/api/v1/runs?wait_for_completion=60`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
      body: form,
    });
    const run = (await multipart.json()) as any;
    assert.equal(multipart.status, 200, JSON.stringify(run));
    assert.deepEqual(run.output, { 'note/note.txt': 'a part sent to B' });
    // A rerun through A of B's multipart run, with A's copy of the run folder gone (if it ran
    // it): the input is read from the blob store.
    rmSync(join(dir, 'a', 'automation', 'runs', run.id), { recursive: true, force: true });
    const rerun = await api(a, 'POST', `/runs/${run.id}/rerun`);
    assert.ok(rerun.status === 200 || rerun.status === 201, JSON.stringify(rerun.body));
    await waitUntil('the rerun completed', async () => (await status(b, rerun.body.id)) === 'completed');
    assert.deepEqual((await api(b, 'GET', `/runs/${rerun.body.id}`)).body.output, {
      'note/note.txt': 'a part sent to B',
    });
  });

  test('(g) output and corrected files are served by either node, whichever ran the run', async () => {
    const done = await api(a, 'POST', '/runs?wait_for_completion=60', {
      target: 'workflows.file-writer',
      input: { text: 'written on one node' },
    });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    const id = done.body.id as string;
    const ran = (await sql<{ node: string }>('SELECT node FROM runs WHERE id = $1', [id])).rows[0]!.node;
    // The node that did not run it has no run folder for it: everything comes from the database.
    const [runner, other] = ran === 'a' ? [a, b] : [b, a];
    const get = (node: Node, path: string) =>
      fetch(`${node.url}/api/v1${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    for (const node of [other, runner]) {
      const listed = await api(node, 'GET', `/runs/${id}/artifacts`);
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      assert.deepEqual(
        listed.body.artifacts.map((f: any) => f.path),
        ['output/out.txt'],
      );
      const bytes = await get(node, `/runs/${id}/artifacts/output/out.txt`);
      assert.equal(bytes.status, 200);
      assert.equal(await bytes.text(), 'written on one node');
      const zip = await get(node, `/runs/${id}/artifacts?zip=1`);
      assert.equal(zip.status, 200);
      const entries = unzipSync(new Uint8Array(await zip.arrayBuffer()));
      assert.equal(Buffer.from(entries['out.txt']!).toString(), 'written on one node');
    }
    // A review made on the other node: an uploaded corrected file and a copy of the output.
    assert.equal((await api(other, 'PUT', `/runs/${id}/reviews`, { verdict: 'incorrect' })).status, 200);
    /** Uploads `text` as the corrected file right.txt through `node`. */
    const uploadRight = async (node: Node, text: string) => {
      const form = new FormData();
      form.append('file', new Blob([text], { type: 'text/plain' }), 'right.txt');
      const upload = await fetch(`${node.url}/api/v1/runs/${id}/reviews/expected`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}` },
        body: form,
      });
      assert.ok(upload.ok, await upload.text());
    };
    await uploadRight(other, 'the right answer');
    const copied = await api(runner, 'POST', `/runs/${id}/reviews/expected`, {
      outputFileName: 'out.txt',
      expectedName: 'copied.txt',
    });
    assert.ok(copied.status < 300, JSON.stringify(copied.body));
    for (const node of [runner, other]) {
      const right = await get(node, `/runs/${id}/reviews/expected/right.txt`);
      assert.equal(await right.text(), 'the right answer');
      const copy = await get(node, `/runs/${id}/reviews/expected/copied.txt`);
      assert.equal(await copy.text(), 'written on one node');
      const bundle = await get(node, `/runs/${id}/artifacts?zip=1&bundle=review`);
      assert.equal(bundle.status, 200);
      const entries = unzipSync(new Uint8Array(await bundle.arrayBuffer()));
      assert.deepEqual(
        Object.fromEntries(Object.entries(entries).map(([k, v]) => [k, Buffer.from(v).toString()])),
        {
          'output/out.txt': 'written on one node',
          'expected/right.txt': 'the right answer',
          'expected/copied.txt': 'written on one node',
        },
      );
    }
    // Replaced under the same name through the runner: the other node, which read (and kept a
    // copy of) the first bytes, now serves the new ones.
    await uploadRight(runner, 'the right answer, corrected');
    for (const node of [other, runner])
      assert.equal(
        await (await get(node, `/runs/${id}/reviews/expected/right.txt`)).text(),
        'the right answer, corrected',
      );
    // The blobs are held by the run: deleting a stored file of the same content keeps them.
    const holds = await sql<{ sha256: string }>('SELECT sha256 FROM blob_holds WHERE holder = $1', [
      `run:${id}`,
    ]);
    assert.equal(holds.rowCount, 3, JSON.stringify(holds.rows));
  });

  test('(h) AUTOMATION_MAX_QUEUED_RUNS counts the runs queued for every node', async () => {
    const c = automationNode('c', join(dir, 'c'), {
      ...nodeEnv,
      AUTOMATION_POOL_THREADS: '1',
      AUTOMATION_MAX_QUEUED_RUNS: '2',
    });
    await c.start();
    try {
      const g = gate();
      // Five held runs fill the three pools (2 + 2 + 1); two more wait in the queue.
      const running: string[] = [];
      for (let i = 0; i < 5; i++) running.push(await start(i % 2 ? a : b, g, `q${i}`));
      await waitUntil('every pool full', async () => (await claimed(running)).length === 5);
      const waiting = [await start(a, g, 'w0'), await start(b, g, 'w1')];
      const queued = await sql<{ n: string }>(
        `SELECT count(*) AS n FROM runs WHERE id = ANY($1) AND queue_state = 'queued'`,
        [waiting],
      );
      assert.equal(Number(queued.rows[0]!.n), 2);
      // C queued nothing itself, yet the cluster's queue is at its bound.
      const refused = await api(c, 'POST', '/runs', { target: GATED, input: { gate: g, text: 'x' } });
      assert.equal(refused.status, 429, JSON.stringify(refused.body));
      assert.equal(refused.body.issues[0].code, 'too_many_queued_runs');
      writeFileSync(g, '');
      for (const id of [...running, ...waiting])
        await waitUntil(`run ${id} completed`, async () => (await status(a, id)) === 'completed');
      const accepted = await api(c, 'POST', '/runs?wait_for_completion=60', {
        target: GATED,
        input: { gate: g, text: 'after' },
      });
      assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
    } finally {
      await c.stop();
    }
  });
});
