// What one synchronous run costs the database: the statements a `sluice automation` node sends
// for POST /runs?wait_for_completion=10 of workflows.text-report, and per run the transactions
// committed (pg_stat_database.xact_commit) and the WAL flushes (pg_stat_wal.wal_sync, PostgreSQL
// 14 and later) over a series of runs, one at a time.
//
//   npx tsx loadtest/automation-pg-statements.ts [--runs N (default 20)]
//   npx tsx loadtest/automation-pg-statements.ts --clients N [--duration S (default 5)] [--nodes 2]
//
// Starts a private PostgreSQL (test/helpers/postgres.ts, fsync on) with log_statement = 'all',
// one node, and prints the statements of the last run as the server logged them (one line each,
// cut at 110 characters; `statement:` is the simple protocol, `execute` a parameterised query).
// With --clients, the runs are N closed loops of sync runs for S seconds instead (under load,
// where statements of concurrent runs are shared), and it prints each kind of statement (its
// first words) with how many the node sent per completed run. Logging every statement slows the
// server, so the counts under load are a picture of the shares, not of the throughput. With
// --nodes 2 a second node shares the database and the clients are spread over both (the counts
// are then of both nodes together, per completed run).
// Load-test tooling, so it imports pg itself.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { arg, counters, load, SYNC } from './automation-pg-load.js';
import { makeRemote, startNode, TOKEN, type Node } from './automation-pg-nodes.js';
import { startPostgres } from '../test/helpers/postgres.js';

const runs = Number(arg('--runs', '20'));
const clients = Number(arg('--clients', '0'));
const seconds = Number(arg('--duration', '5'));
const nodeCount = Number(arg('--nodes', '1'));
const SYNC_BODY = JSON.stringify({ target: 'workflows.text-report', input: { text: 'the quick brown fox' } });

async function syncRun(node: Node): Promise<void> {
  const res = await fetch(`${node.url}/api/v1/runs?wait_for_completion=10`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: SYNC_BODY,
  });
  const body = (await res.json()) as { finished?: boolean; error?: unknown };
  if (res.status !== 200 || body.finished !== true || body.error)
    throw new Error(`run: HTTP ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
}

/** The logged statements from `offset` on, of the node's connections, one line each. */
function statements(logFile: string, offset: number): string[] {
  const text = readFileSync(logFile, 'utf8').slice(offset);
  const out: string[] = [];
  let open = false; // the last line was a node's statement: continuation lines belong to it
  for (const line of text.split('\n')) {
    if (/^\s/.test(line)) {
      if (open) out[out.length - 1] += ' ' + line.trim();
      continue;
    }
    const m = /^(sluice-[^|]*)\|(\d+)\|LOG:\s+(statement|execute [^:]*): (.*)$/.exec(line);
    open = m !== null;
    if (m) out.push(`${m[1]} [${m[2]}] ${m[3]!.startsWith('execute') ? 'execute' : 'simple'}: ${m[4]}`);
  }
  return out.map((s) => s.replace(/\s+/g, ' ').slice(0, 140));
}

/** The statement's kind: its text up to the first parameter or list, cut at 70 characters. */
function kind(line: string): string {
  const text = line.slice(line.indexOf(': ') + 2);
  return text.replace(/\(\$1.*$|\$\d.*$/, '').slice(0, 70);
}

async function underLoad(nodes: Node[], url: string, logFile: string): Promise<void> {
  const urls = nodes.map((n) => n.url);
  await load(urls, clients, 1000, SYNC); // warm-up under load
  const before = await counters(url);
  const offset = readFileSync(logFile, 'utf8').length;
  const m = await load(urls, clients, seconds * 1000, SYNC);
  const after = await counters(url);
  const byKind = new Map<string, number>();
  for (const l of statements(logFile, offset)) byKind.set(kind(l), (byKind.get(kind(l)) ?? 0) + 1);
  const per = (x: number) => (x / m.requests).toFixed(2);
  process.stdout.write(
    `${m.requests} runs completed, ${m.errors} errors, ${clients} clients, ${nodes.length} node(s), ${seconds} s\n`,
  );
  process.stdout.write('statements per completed run, by kind (the settling 11 s included):\n');
  for (const [k, c] of [...byKind].sort((a, b) => b[1] - a[1])) process.stdout.write(`  ${per(c)}  ${k}\n`);
  process.stdout.write(
    `per run: ${per(after.commits - before.commits - 1)} transactions committed, ` +
      `${per(after.walSyncs - before.walSyncs)} WAL flushes\n`,
  );
}

async function main(): Promise<void> {
  if (!(Number.isInteger(runs) && runs >= 1)) throw new Error('--runs N, N ≥ 1');
  if (!(Number.isInteger(clients) && clients >= 0 && seconds > 0 && seconds <= 20))
    throw new Error('--clients N ≥ 0, --duration 1..20');
  if (nodeCount !== 1 && !(nodeCount === 2 && clients > 0)) throw new Error('--nodes 2 only with --clients');
  const dir = mkdtempSync(join(tmpdir(), 'sluice-lt-stmts-'));
  const server = await startPostgres();
  let node: Node | undefined;
  let second: Node | undefined;
  try {
    const url = await server.createDatabase();
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query(`ALTER SYSTEM SET log_statement = 'all'`);
    await admin.query(`ALTER SYSTEM SET log_line_prefix = '%a|%p|'`);
    await admin.query('SELECT pg_reload_conf()');
    await admin.end();
    node = await startNode('a', dir, {
      AUTOMATION_DATABASE_URL: url,
      AUTOMATION_REGISTRY_URL: makeRemote(dir),
    });
    for (let i = 0; i < 3; i++) await syncRun(node); // warm-up: workers, registry cache, connections
    if (nodeCount === 2) {
      second = await startNode('b', dir, { AUTOMATION_DATABASE_URL: url });
      for (let i = 0; i < 3; i++) await syncRun(second);
    }
    const logFile = join(dirname(server.dataDir), 'server.log');
    if (clients > 0) return await underLoad(second ? [node, second] : [node], url, logFile);
    const before = await counters(url);
    let offset = 0;
    for (let i = 0; i < runs; i++) {
      if (i === runs - 1) offset = readFileSync(logFile, 'utf8').length;
      await syncRun(node);
    }
    const after = await counters(url);
    const lines = statements(logFile, offset);
    process.stdout.write(`statements of one sync run (${lines.length}):\n`);
    for (const l of lines) process.stdout.write(`  ${l}\n`);
    // The probe's own transaction (one) is not the node's.
    process.stdout.write(
      `per run over ${runs} runs: ${((after.commits - before.commits - 1) / runs).toFixed(1)} transactions committed, ` +
        `${((after.walSyncs - before.walSyncs) / runs).toFixed(1)} WAL flushes\n`,
    );
  } finally {
    await second?.child.stop(5000);
    await node?.child.stop(5000);
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
