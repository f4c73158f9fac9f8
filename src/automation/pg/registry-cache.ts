// A node's cache of the registry's records (automations, aliases, versions) on PostgreSQL
// (docs/automation.md, "The registry on several nodes"). Every run start reads them, and they
// change only when the registry is written (a sync, a release), which sends NOTIFY
// sluice_registry in the writing transaction. The run queue's listening connection hears it on
// every node and the whole cache is dropped: registry writes are rare, and dropping everything
// cannot miss an alias that moved from one automation to another.
//
// The cache is trusted only while that connection listens: a notification sent while it was
// down is lost, so everything is dropped when it breaks and nothing is kept until it listens
// again. A read that is in flight when the cache is dropped is not kept either (its entry is
// gone), since it may have started before the write committed.

/** Notified (payload: the automation id) in the transaction of every registry write. */
export const REGISTRY_CHANNEL = 'sluice_registry';

export class RegistryCache {
  private trusted = false;
  private readonly entries = new Map<string, Promise<unknown>>();

  /** The listening connection listens (at start and after each reconnect). */
  trust(): void {
    this.entries.clear();
    this.trusted = true;
  }

  /** The listening connection broke: nothing cached can be trusted until it listens again. */
  distrust(): void {
    this.trusted = false;
    this.entries.clear();
  }

  /** A registry write committed (on this node or, heard by notification, on another). */
  drop(): void {
    this.entries.clear();
  }

  /**
   * `key`'s value, from the cache when trusted, else from `load` (kept when trusted). Concurrent
   * readers of one key share one load. Each caller gets its own copy (callers may change it).
   */
  async read<V>(key: string, load: () => Promise<V>): Promise<V> {
    if (!this.trusted) return load();
    let entry = this.entries.get(key) as Promise<V> | undefined;
    if (!entry) {
      const loading = load();
      entry = loading;
      this.entries.set(key, loading);
      loading.catch(() => {
        if (this.entries.get(key) === loading) this.entries.delete(key);
      });
    }
    return structuredClone(await entry);
  }
}
