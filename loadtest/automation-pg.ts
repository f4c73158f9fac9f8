// The automation service on PostgreSQL, one node and two nodes on this machine, with the
// PostgreSQL ceiling (automation-pg-ceiling.ts) in the same run on the same database:
//   0. the same measurements on LMDB (one node, no AUTOMATION_DATABASE_URL), same client;
//   1. sync trivial run (POST /runs?wait_for_completion=10 of workflows.text-report): p50 at one
//      client, runs/s at --connections clients; one node, then two nodes (clients split over both);
//   2. run list (GET /runs?limit=50&status=completed) p50/p99 at one client over 100k stored runs,
//      written by a bulk SQL insert (not HTTP), one node;
//   3. the ceiling: INSERT … RETURNING + SELECT … FOR UPDATE SKIP LOCKED, 4 connections.
//
//   npx tsx loadtest/automation-pg.ts [--duration S (default 5, ≤ 10)] [--connections N (default 16)]
//
// Starts a private PostgreSQL (test/helpers/postgres.ts) and `sluice automation` processes
// (bin/sluice.js) sharing a registry remote made from automations/, and stops them by pid. The
// HTTP client is a closed loop of fetch calls in this process (one request in flight per client).
// Load-test tooling, so it imports pg itself.

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { measurePgCeiling } from './automation-pg-ceiling.js';
import { arg, load, SYNC, type Measured } from './automation-pg-load.js';
import { makeRemote, startNode, type Node } from './automation-pg-nodes.js';
import { fillRuns, syntheticRun } from './scenarios/automation-support/fill.js';
import { startPostgres } from '../test/helpers/postgres.js';

const LIST = { method: 'GET', path: '/api/v1/runs?limit=50&status=completed', ok: 200 };

/** 100k completed/failed/cancelled runs, 5000 rows per INSERT … SELECT FROM unnest(…). */
async function bulkRuns(url: string, count: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const start = Date.now() - count - 60_000;
    for (let done = 0; done < count; done += 5000) {
      const cols: unknown[][] = Array.from({ length: 13 }, () => []);
      for (let i = done; i < Math.min(count, done + 5000); i++) {
        const r = syntheticRun(i, start);
        const row = [
          r.id,
          r.tenant,
          r.automationId,
          r.type,
          r.status,
          r.trigger.type,
          r.trigger.by,
          r.batchId,
          r.exampleId,
          r.createdAt,
          r.completedAt,
          r.sampleRank,
          JSON.stringify(r),
        ];
        row.forEach((v, c) => cols[c]!.push(v));
      }
      await client.query(
        `INSERT INTO runs (id, tenant, automation_id, type, status, trigger_type, triggered_by, batch_id,
           example_id, created_at, completed_at, sample_rank, record)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
           $7::text[], $8::text[], $9::text[], $10::bigint[], $11::bigint[], $12::float8[], $13::json[])`,
        cols,
      );
    }
    await client.query('ANALYZE runs');
  } finally {
    await client.end();
  }
}

const fmt = (m: Measured) =>
  `${Math.round(m.perSecond)} req/s, p50 ${m.p50.toFixed(2)} ms, p99 ${m.p99.toFixed(2)} ms (${m.requests} ok, ${m.errors} errors)`;

async function main(): Promise<void> {
  const seconds = Number(arg('--duration', '5'));
  const connections = Number(arg('--connections', '16'));
  if (!(seconds > 0 && seconds <= 10) || !(connections >= 1))
    throw new Error('--duration 1..10, --connections ≥ 1');
  const ms = seconds * 1000;
  const dir = mkdtempSync(join(tmpdir(), 'sluice-lt-pg-'));
  const server = await startPostgres();
  const nodes: Node[] = [];
  const out = (line: string) => process.stdout.write(line + '\n');
  try {
    // The LMDB figures first, with the same client, for the comparison.
    mkdirSync(join(dir, 'lmdb', 'automation'), { recursive: true });
    await fillRuns(join(dir, 'lmdb', 'automation', 'meta.lmdb'), 100_000);
    const lmdb = await startNode('lmdb', dir, {});
    nodes.push(lmdb);
    await load([lmdb.url], 1, 1000, SYNC);
    out(`LMDB, sync run, 1 client:              ${fmt(await load([lmdb.url], 1, ms, SYNC))}`);
    out(
      `LMDB, sync run, ${connections} clients:            ${fmt(await load([lmdb.url], connections, ms, SYNC))}`,
    );
    await load([lmdb.url], 1, 1000, LIST);
    out(`LMDB, run list over 100k, 1 client:    ${fmt(await load([lmdb.url], 1, ms, LIST))}`);
    await nodes.pop()!.child.stop(5000);
    const url = await server.createDatabase();
    const env = { AUTOMATION_DATABASE_URL: url, AUTOMATION_REGISTRY_URL: makeRemote(dir) };
    nodes.push(await startNode('a', dir, env));
    const a = [nodes[0]!.url];
    await load(a, 1, 1000, SYNC); // warm-up: worker threads, registry cache, connections
    out(`one node, sync run, 1 client:          ${fmt(await load(a, 1, ms, SYNC))}`);
    out(`one node, sync run, ${connections} clients:        ${fmt(await load(a, connections, ms, SYNC))}`);
    nodes.push(await startNode('b', dir, env));
    const ab = nodes.map((n) => n.url);
    await load(ab, 2, 1000, SYNC);
    out(`two nodes, sync run, 1 client (on b):  ${fmt(await load([ab[1]!], 1, ms, SYNC))}`);
    out(`two nodes, sync run, ${connections} clients:       ${fmt(await load(ab, connections, ms, SYNC))}`);
    await bulkRuns(url, 100_000);
    await load(a, 1, 1000, LIST);
    out(`one node, run list over 100k, 1 client: ${fmt(await load(a, 1, ms, LIST))}`);
    out(`two nodes, run list, ${connections} clients:     ${fmt(await load(ab, connections, ms, LIST))}`);
    const c = await measurePgCeiling(url, { durationMs: ms, connections: 4 });
    out(
      `ceiling (INSERT … RETURNING + FOR UPDATE SKIP LOCKED claim), 4 connections: ` +
        `${Math.round(c.iterationsPerSecond)} runs/s, p50 ${c.p50Ms.toFixed(2)} ms, p99 ${c.p99Ms.toFixed(2)} ms`,
    );
  } finally {
    for (const n of nodes) await n.child.stop(5000);
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
