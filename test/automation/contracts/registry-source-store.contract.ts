// The RegistrySourceStore contract: a commit's bundle blob recorded once (the first record is
// kept, a later copy's blob released), and the registry base chosen by one caller at a time.
// The factory gives the blob store the sources hold blobs in and, where callers can wait on each
// other across connections, a probe of how many wait for the base's lock.

import { strict as assert } from 'node:assert';
import { it } from 'node:test';
import type { BlobStore } from '../../../src/automation/files/blob-store.js';
import type { RegistrySourceStore } from '../../../src/automation/registry/source-store.js';
import { waitUntil } from '../../helpers/wait.js';
import { chunks } from './blob-store.contract.js';
import { contractSuite } from './suite.js';

export interface RegistrySourceStoreUnderTest {
  store: RegistrySourceStore;
  blobs: BlobStore;
  /** Callers waiting for the base's lock now (undefined: callers of one process just take turns). */
  baseWaiters?: () => Promise<number>;
  close(): Promise<void>;
}

const commit = (c: string) => c.repeat(40);

export function registrySourceStoreContract(
  name: string,
  make: () => Promise<RegistrySourceStoreUnderTest>,
): void {
  contractSuite(`RegistrySourceStore contract (${name})`, make, (opened) => {
    const write = async (text: string) => (await opened().blobs.write(chunks(Buffer.from(text)))).sha256;

    it('records a commit’s bundle once: the first record is kept, a later copy released', async () => {
      const { store, blobs } = opened();
      assert.equal(await store.get(commit('a')), undefined);
      const first = await write('bundle of a, first');
      const second = await write('bundle of a, second');
      await store.put(commit('a'), first);
      assert.equal(await store.get(commit('a')), first);
      await store.put(commit('a'), second);
      assert.equal(await store.get(commit('a')), first);
      assert.ok(await blobs.stat(first), 'the recorded bundle is kept');
      assert.equal(await blobs.stat(second), undefined, 'the copy nothing holds is deleted');
      // The same record again changes nothing and keeps its blob.
      await store.put(commit('a'), first);
      assert.ok(await blobs.stat(first));
      assert.equal(await store.get(commit('b')), undefined);
    });

    it('two commits may share one bundle blob', async () => {
      const { store, blobs } = opened();
      const shared = await write('bundle of c and d');
      await store.put(commit('c'), shared);
      await store.put(commit('d'), shared);
      assert.equal(await store.get(commit('c')), shared);
      assert.equal(await store.get(commit('d')), shared);
      assert.ok(await blobs.stat(shared));
    });

    it('the base: chosen by the first caller, seen by later ones, never replaced', async () => {
      const { store, baseWaiters } = opened();
      const log: string[] = [];
      let open!: () => void;
      const gate = new Promise<void>((r) => (open = r));
      let entered!: () => void;
      const inside = new Promise<void>((r) => (entered = r));
      const first = store.withBase(async (base) => {
        log.push(`first saw ${base}`);
        entered();
        await gate;
        log.push('first done');
        return commit('e');
      });
      await inside;
      const second = store.withBase(async (base) => {
        log.push(`second saw ${base}`);
        return commit('f');
      });
      if (baseWaiters)
        await waitUntil('the second caller waiting for the lock', async () => (await baseWaiters()) >= 1);
      open();
      await Promise.all([first, second]);
      assert.deepEqual(log, ['first saw undefined', 'first done', `second saw ${commit('e')}`]);
      let seen: string | undefined;
      await store.withBase(async (base) => {
        seen = base;
        return undefined;
      });
      assert.equal(seen, commit('e'));
    });

    it('a failing caller records no base and lets the next one in', async () => {
      const { store } = opened();
      await assert.rejects(
        store.withBase(async () => {
          throw new Error('seeding failed');
        }),
        /seeding failed/,
      );
      let seen: string | undefined = 'none';
      await store.withBase(async (base) => {
        seen = base;
        return undefined;
      });
      assert.equal(seen, commit('e'), 'the base recorded before stays');
    });
  });
}
