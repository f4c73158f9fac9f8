// `sluice backup` taken while a real server serves produces, runs and uploads, and `sluice
// restore` into a new data directory: a server started on it has every record, run and file
// that was acknowledged before the backup began, with the same content; nothing in the restored
// log was never acknowledged; and restore refuses a directory a server is using.
import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { LMDB_ENVIRONMENTS } from '../../src/backup/layout.js';
import type { Manifest } from '../../src/backup/manifest.js';
import { checkCopy } from '../../src/backup/storage.js';
import { waitUntil } from '../helpers/wait.js';
import { firstKey, runCli, startCli, startServer, type Server } from './harness.js';

const V2 = 'application/vnd.streams.json.v2+json';

interface Acked {
  before: boolean;
}
interface AckedRecord extends Acked {
  seq: number;
  partition: number;
  offset: number;
}
interface AckedRun extends Acked {
  id: string;
}
interface AckedFile extends Acked {
  id: string;
  content: string;
}

describe('sluice backup and restore', () => {
  const root = mkdtempSync(join(tmpdir(), 'sluice-backup-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  it('an online backup under load restores everything acknowledged before it began', async () => {
    const source = join(root, 'source');
    const backup = join(root, 'backup');
    const restored = join(root, 'restored');
    let server: Server | undefined = await startServer(source);
    let second: Server | undefined;
    try {
      const token = await firstKey(server);
      const auth = { authorization: `Bearer ${token}` };
      const json = (body: unknown) => ({
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const created = await fetch(
        `${server.streams}/streams/topics/topic`,
        json({ topic_name: 'load', partitions: 2 }),
      );
      assert.equal(created.status, 200, await created.text());

      // A run that finished (with its output file) before anything else.
      const done = await fetch(
        `${server.automation}/runs?wait_for_completion=120`,
        json({ target: 'workflows.text-report', input: { text: 'kept across a backup' } }),
      );
      assert.equal(done.status, 200, await done.clone().text());
      const finishedRun = ((await done.json()) as { id: string }).id;
      const report = await fetch(`${server.automation}/runs/${finishedRun}/artifacts/output/report.md`, {
        headers: auth,
      });
      assert.equal(report.status, 200);
      const reportText = await report.text();

      // Continuous load: produces, runs and uploads, each loop one request at a time.
      let backupStarted = false;
      let stop = false;
      const records: AckedRecord[] = [];
      const runs: AckedRun[] = [];
      const files: AckedFile[] = [];
      let seq = 0;
      const s = server;
      const produce = async () => {
        while (!stop) {
          const first = seq;
          seq += 5;
          const res = await fetch(`${s.streams}/streams/topic/load`, {
            method: 'POST',
            headers: { ...auth, 'content-type': V2 },
            body: JSON.stringify({ records: [0, 1, 2, 3, 4].map((i) => ({ value: { seq: first + i } })) }),
          });
          assert.equal(res.status, 200, await res.clone().text());
          const before = !backupStarted;
          const { offsets } = (await res.json()) as { offsets: { partition: number; offset: number }[] };
          offsets.forEach((o, i) => records.push({ seq: first + i, ...o, before }));
        }
      };
      const startRuns = async () => {
        for (let n = 0; !stop; n++) {
          const res = await fetch(
            `${s.automation}/runs`,
            json({ target: 'workflows.text-report', input: { text: `run ${n}` } }),
          );
          assert.equal(res.status, 201, await res.clone().text());
          const before = !backupStarted;
          runs.push({ id: ((await res.json()) as { id: string }).id, before });
        }
      };
      const upload = async () => {
        for (let n = 0; !stop; n++) {
          const content = `file ${n} ${'x'.repeat(n % 7)}`;
          const form = new FormData();
          form.append('file', new Blob([content]), `f${n}.txt`);
          const res = await fetch(`${s.automation}/files`, { method: 'POST', headers: auth, body: form });
          assert.equal(res.status, 200, await res.clone().text());
          const before = !backupStarted;
          files.push({ id: ((await res.json()) as { id: string }).id, content, before });
        }
      };
      const load = Promise.all([produce(), startRuns(), upload()]);
      load.catch(() => (stop = true));
      await waitUntil(
        'load to be under way',
        () => records.length >= 50 && runs.length >= 5 && files.length >= 5,
      );

      backupStarted = true;
      const backupRun = startCli(source, ['backup', backup]);
      const counts = { records: records.length, runs: runs.length, files: files.length };
      const result = await backupRun.done;
      stop = true;
      await load;
      assert.equal(result.code, 0, `backup failed:\n${result.stdout}\n${result.stderr}`);
      assert.ok(
        records.length > counts.records || runs.length > counts.runs || files.length > counts.files,
        'the server kept acknowledging work while the backup ran',
      );

      // The backup: private, with a manifest, and LMDB copies that open.
      assert.equal(statSync(backup).mode & 0o777, 0o700);
      const manifest = JSON.parse(readFileSync(join(backup, 'manifest.json'), 'utf8')) as Manifest;
      assert.deepEqual(manifest.lmdb.map((e) => e.name).sort(), LMDB_ENVIRONMENTS.map((e) => e.name).sort());
      for (const env of LMDB_ENVIRONMENTS) {
        const entries = await checkCopy(env, join(backup, 'data'));
        assert.deepEqual(entries, manifest.lmdb.find((e) => e.name === env.name)!.entries);
      }
      assert.ok(manifest.registry && manifest.registry.refs > 0);
      assert.deepEqual(manifest.absent, []);

      assert.equal(await server.stop(), 0, server.output());
      server = undefined;

      const restore = await runCli(restored, ['restore', backup]);
      assert.equal(restore.code, 0, `restore failed:\n${restore.stdout}\n${restore.stderr}`);

      second = await startServer(restored);
      const r = second;
      // The restored key store: the same key works.
      const get = (url: string) => fetch(url, { headers: auth });

      // Streams: every record acknowledged before the backup is there, and every record there
      // was acknowledged (or at least sent) with that value at that offset.
      const bySpot = new Map(records.map((a) => [`${a.partition}:${a.offset}`, a.seq]));
      const found = new Map<string, number>();
      for (const partition of [0, 1]) {
        for (let offset = 0; ;) {
          const res = await get(
            `${r.streams}/streams/topics/load/partitions/${partition}/records?offset=${offset}`,
          );
          assert.equal(res.status, 200, await res.clone().text());
          const page = (await res.json()) as { offset: number; value: { seq: number } }[];
          if (page.length === 0) break;
          for (const rec of page) found.set(`${partition}:${rec.offset}`, rec.value.seq);
          offset = page.at(-1)!.offset + 1;
        }
      }
      const beforeRecords = records.filter((a) => a.before);
      assert.ok(beforeRecords.length >= 50);
      for (const a of beforeRecords)
        assert.equal(
          found.get(`${a.partition}:${a.offset}`),
          a.seq,
          `record ${a.seq} at ${a.partition}:${a.offset}`,
        );
      const sent = new Set(Array.from({ length: seq }, (_, i) => i));
      for (const [spot, value] of found) {
        assert.ok(sent.has(value), `record at ${spot} holds ${value}, never sent`);
        const acked = bySpot.get(spot);
        if (acked !== undefined) assert.equal(value, acked, `record at ${spot}`);
      }

      // Runs: each accepted before the backup exists, and ends (docs/automation.md: runs left
      // pending by a previous process are dispatched again, running ones are marked failed).
      for (const run of runs.filter((x) => x.before)) {
        const status = await waitUntil(`run ${run.id} to end after restore`, async () => {
          const res = await get(`${r.automation}/runs/${run.id}`);
          assert.equal(res.status, 200, `run ${run.id}: ${await res.clone().text()}`);
          const body = (await res.json()) as { finished: boolean; execution: { status: string } };
          return body.finished ? body.execution.status : undefined;
        });
        // Pending in the snapshot: dispatched again and completed; running: marked failed.
        assert.ok(['completed', 'failed'].includes(status), `run ${run.id} ended ${status}`);
      }
      const kept = await get(`${r.automation}/runs/${finishedRun}/artifacts/output/report.md`);
      assert.equal(kept.status, 200);
      assert.equal(await kept.text(), reportText);

      // Files: the content of each upload acknowledged before the backup.
      for (const file of files.filter((x) => x.before)) {
        const res = await get(`${r.automation}/files/${file.id}/content`);
        assert.equal(res.status, 200, `file ${file.id}`);
        assert.equal(await res.text(), file.content);
      }

      // Restore refuses a data directory a server is using, even with --force.
      for (const args of [
        ['restore', backup],
        ['restore', backup, '--force'],
      ]) {
        const refused = await runCli(restored, args);
        assert.equal(refused.code, 1, refused.stdout + refused.stderr);
        assert.match(refused.stderr, /a sluice server \(pid \d+\) is using/);
      }
      const still = await get(`${r.automation}/runs/${finishedRun}`);
      assert.equal(still.status, 200);

      assert.equal(await second.stop(), 0, second.output());
      second = undefined;

      // Stopped: a restore over it needs --force, and then succeeds.
      const busy = await runCli(restored, ['restore', backup]);
      assert.equal(busy.code, 1);
      assert.match(busy.stderr, /is not empty; .* --force/);
      const forced = await runCli(restored, ['restore', backup, '--force']);
      assert.equal(forced.code, 0, forced.stdout + forced.stderr);
    } finally {
      await server?.stop();
      await second?.stop();
    }
  });
});
