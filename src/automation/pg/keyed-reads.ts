// Reads by key that share statements (the read side of batcher.ts): while a read of this kind is
// in flight, the keys asked for meanwhile wait for it and are then read together by one
// statement (`… WHERE key = ANY($1)`). A read statement outside a transaction is a transaction of
// its own (pg_stat_database.xact_commit): under load this makes one of many. A read still starts
// after it was asked for, so it sees every write committed before that.

import { Batcher } from './batcher.js';
import type { Queryable } from './pool.js';

export class KeyedReads<V> {
  private readonly batcher: Batcher<string, V[]>;

  /**
   * `sql` takes the keys as `$1::text[]` and returns rows of `k` (the key) and `v` (a value), in
   * the order each key's values are to be returned.
   */
  constructor(db: Queryable, sql: string) {
    this.batcher = new Batcher<string, V[]>(async (keys) => {
      const { rows } = await db.query<{ k: string; v: V }>(sql, [[...new Set(keys)]]);
      const byKey = new Map<string, V[]>();
      for (const r of rows) {
        let values = byKey.get(r.k);
        if (!values) byKey.set(r.k, (values = []));
        values.push(r.v);
      }
      return keys.map((k) => byKey.get(k) ?? []);
    });
  }

  /** Every value of the key. */
  all(key: string): Promise<V[]> {
    return this.batcher.submit(key);
  }

  /** The key's value, if any. */
  async one(key: string): Promise<V | undefined> {
    return (await this.batcher.submit(key))[0];
  }
}
