// The ExampleStore contract: a tenant's examples of an automation in dataset order, conflicts
// and not-found as API errors, imports applied in one step, and the blob references example
// files hold (a blob goes when no example or file holds it). The factory gives the blob store
// the example store counts references in.

import { strict as assert } from 'node:assert';
import { it } from 'node:test';
import type { ExampleStore } from '../../../src/automation/datasets/store.js';
import type { ExampleRecord } from '../../../src/automation/datasets/types.js';
import type { BlobStore } from '../../../src/automation/files/blob-store.js';
import { chunks } from './blob-store.contract.js';
import { contractSuite } from './suite.js';

export interface ExampleStoreUnderTest {
  store: ExampleStore;
  blobs: BlobStore;
  close(): Promise<void>;
}

function example(tenant: string, id: string, extra: Partial<ExampleRecord> = {}): ExampleRecord {
  return {
    id,
    tenant,
    automationId: 'wf_a',
    automationType: 'workflow',
    name: id,
    input: { text: id, nested: [1, null, { a: 'é' }] },
    expected: null,
    metadata: null,
    annotation: null,
    rowOrder: null,
    overrides: null,
    latestRunId: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    files: { input: {}, expected: {} },
    ...extra,
  };
}

const status = (code: number) => (e: unknown) => (e as { status?: number }).status === code;

export function exampleStoreContract(label: string, make: () => Promise<ExampleStoreUnderTest>): void {
  contractSuite(`ExampleStore contract: ${label}`, make, (s) => {
    const ids = (list: ExampleRecord[]) => list.map((e) => e.id);

    it('lists a tenant’s examples of one automation in dataset order (rowOrder, null last, id)', async () => {
      await s().store.insert(example('t1', 'ex_c', { rowOrder: 1 }));
      await s().store.insert(example('t1', 'ex_a', { rowOrder: null }));
      await s().store.insert(example('t1', 'ex_b', { rowOrder: 1 }));
      await s().store.insert(example('t1', 'ex_d', { rowOrder: 0.5 }));
      await s().store.insert(example('t1', 'ex_e', { rowOrder: null, automationId: 'wf_b' }));
      await s().store.insert(example('t2', 'ex_f', { rowOrder: 7 }));
      assert.deepEqual(ids(await s().store.list('t1', 'wf_a')), ['ex_d', 'ex_b', 'ex_c', 'ex_a']);
      assert.deepEqual(ids(await s().store.list('t1', 'wf_b')), ['ex_e']);
      assert.deepEqual(ids(await s().store.list('t2', 'wf_a')), ['ex_f']);
      assert.deepEqual(await s().store.list('t3', 'wf_a'), []);
      assert.equal(await s().store.nextRowOrder('t1', 'wf_a'), 2);
      assert.equal(await s().store.nextRowOrder('t2', 'wf_a'), 8);
      assert.equal(await s().store.nextRowOrder('t1', 'wf_b'), 0);
      assert.equal(await s().store.nextRowOrder('t3', 'wf_a'), 0);
    });

    it('get and find name the tenant; another tenant’s example is absent (find: 404)', async () => {
      assert.deepEqual(await s().store.get('t1', 'wf_a', 'ex_c'), example('t1', 'ex_c', { rowOrder: 1 }));
      assert.deepEqual(await s().store.find('t1', 'wf_a', 'ex_c'), example('t1', 'ex_c', { rowOrder: 1 }));
      assert.equal(await s().store.get('t2', 'wf_a', 'ex_c'), undefined);
      assert.equal(await s().store.get('t1', 'wf_b', 'ex_c'), undefined);
      await assert.rejects(s().store.find('t2', 'wf_a', 'ex_c'), status(404));
    });

    it('insert refuses a taken id with a 409; put replaces', async () => {
      await assert.rejects(s().store.insert(example('t1', 'ex_c')), status(409));
      await s().store.insert(example('t2', 'ex_c'));
      await s().store.put(example('t1', 'ex_c', { name: 'renamed', rowOrder: 1 }));
      assert.equal((await s().store.get('t1', 'wf_a', 'ex_c'))!.name, 'renamed');
      await s().store.put(example('t1', 'ex_new'));
      assert.ok(await s().store.get('t1', 'wf_a', 'ex_new'));
    });

    it('update applies a change to the current record; its error and a missing example reject', async () => {
      const next = await s().store.update('t1', 'wf_a', 'ex_c', (cur) => ({ ...cur, annotation: 'noted' }));
      assert.equal(next.annotation, 'noted');
      assert.deepEqual(await s().store.get('t1', 'wf_a', 'ex_c'), next);
      const refusal = new Error('refused by the change');
      await assert.rejects(
        s().store.update('t1', 'wf_a', 'ex_c', () => {
          throw refusal;
        }),
        (e) => e === refusal,
      );
      assert.deepEqual(await s().store.get('t1', 'wf_a', 'ex_c'), next);
      await assert.rejects(
        s().store.update('t2', 'wf_a', 'ex_d', (cur) => cur),
        status(404),
      );
    });

    it('delete answers the removed record; a missing one is a 404', async () => {
      const gone = await s().store.delete('t1', 'wf_a', 'ex_new');
      assert.equal(gone.id, 'ex_new');
      assert.equal(await s().store.get('t1', 'wf_a', 'ex_new'), undefined);
      await assert.rejects(s().store.delete('t1', 'wf_a', 'ex_new'), status(404));
    });

    it('example files hold their blobs: a blob goes when no example holds it', async () => {
      const a = await s().blobs.write(chunks(Buffer.from('example file a')));
      const b = await s().blobs.write(chunks(Buffer.from('example file b')));
      const ref = (x: { sha256: string; size: number }) => ({ ...x, contentType: 'text/plain' });
      await s().store.insert(example('t5', 'ex_1', { files: { input: { 'a.txt': ref(a) }, expected: {} } }));
      await s().store.insert(
        example('t5', 'ex_2', { files: { input: { 'a.txt': ref(a) }, expected: { 'b.txt': ref(b) } } }),
      );
      await s().store.delete('t5', 'wf_a', 'ex_1');
      assert.ok(await s().blobs.stat(a.sha256), 'ex_2 still holds a');
      await s().store.update('t5', 'wf_a', 'ex_2', (cur) => ({
        ...cur,
        files: { input: {}, expected: cur.files.expected },
      }));
      assert.equal(await s().blobs.stat(a.sha256), undefined);
      await s().store.put(example('t5', 'ex_2'));
      assert.equal(await s().blobs.stat(b.sha256), undefined);
    });

    it('apply append adds examples whose name is new; replace makes the import the dataset', async () => {
      await s().store.insert(example('t6', 'ex_old', { name: 'kept' }));
      const c = await s().blobs.write(chunks(Buffer.from('import file')));
      const withFile = example('t6', 'ex_i2', {
        name: 'fresh',
        files: { input: { 'c.txt': { ...c, contentType: 'text/plain' } }, expected: {} },
      });
      const appended = await s().store.apply('t6', 'wf_a', 'append', [
        example('t6', 'ex_i1', { name: 'kept' }),
        withFile,
      ]);
      assert.deepEqual(ids(appended.created), ['ex_i2']);
      assert.deepEqual(ids(appended.skipped), ['ex_i1']);
      assert.deepEqual([appended.deleted, appended.filesDeleted], [0, 0]);
      assert.deepEqual(ids(await s().store.list('t6', 'wf_a')), ['ex_i2', 'ex_old']);
      const replaced = await s().store.apply('t6', 'wf_a', 'replace', [
        example('t6', 'ex_r1', { name: 'kept' }),
      ]);
      assert.deepEqual(ids(replaced.created), ['ex_r1']);
      assert.deepEqual([replaced.deleted, replaced.filesDeleted], [2, 1]);
      assert.deepEqual(ids(await s().store.list('t6', 'wf_a')), ['ex_r1']);
      assert.equal(await s().blobs.stat(c.sha256), undefined, 'the replaced examples’ blobs went with them');
      assert.deepEqual(ids(await s().store.list('t1', 'wf_a')).length, 4, 'other tenants are untouched');
    });
  });
}
