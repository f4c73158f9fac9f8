// The group-state contract on LMDB (one node).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RootDatabase } from 'lmdb';
import { LmdbGroupStore } from '../../src/streams/groups/lmdb-store.js';
import type { GroupStore } from '../../src/streams/groups/store.js';
import { openStreamsEnvironment } from '../../src/streams/storage.js';
import { groupStoreContract } from './group-store-contract.js';

groupStoreContract('LMDB', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-groups-'));
  const roots = new Map<GroupStore, RootDatabase>();
  return {
    async open(nodeId) {
      const root = openStreamsEnvironment(dir);
      const store = new LmdbGroupStore(root, nodeId);
      roots.set(store, root);
      return store;
    },
    async close(store) {
      await store.close();
      await roots.get(store)?.close();
      roots.delete(store);
    },
    async cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
