// Blob reference counts in PostgreSQL (`blob_refs`), shared by the file and example stores: a
// blob is kept while a file, an upload session or a dataset example holds it, or while a hold
// (`blob_holds`: a run's files, a registry source) names it. Counts change
// inside the caller's transaction; blobs left without a reference are deleted after it commits,
// and only when still unreferenced then (another writer may have taken the same content since).

import type { BlobStore } from '../../files/blob-store.js';
import type { PgDatabase, Queryable } from '../pool.js';

/**
 * Adds `delta` references to a blob inside a transaction; a count that reaches zero (or a
 * release of a blob without any) removes the row and names the blob in `dropped`.
 */
export async function adjustRefs(
  tx: Queryable,
  sha256: string,
  delta: number,
  dropped: string[],
): Promise<void> {
  if (delta === 0) return;
  if (delta > 0) {
    await tx.query(
      `INSERT INTO blob_refs (sha256, refs) VALUES ($1, $2)
       ON CONFLICT (sha256) DO UPDATE SET refs = blob_refs.refs + excluded.refs`,
      [sha256, delta],
    );
    return;
  }
  const { rowCount } = await tx.query(
    'UPDATE blob_refs SET refs = refs + $2 WHERE sha256 = $1 AND refs + $2 > 0',
    [sha256, delta],
  );
  if ((rowCount ?? 0) > 0) return;
  await tx.query('DELETE FROM blob_refs WHERE sha256 = $1', [sha256]);
  dropped.push(sha256);
}

/** After the transaction: deletes each dropped blob that nothing references or holds now. */
export async function collectUnreferenced(
  db: PgDatabase,
  blobs: BlobStore,
  dropped: readonly string[],
): Promise<void> {
  for (const sha256 of new Set(dropped)) {
    const { rowCount } = await db.query(
      'SELECT 1 FROM blob_refs WHERE sha256 = $1 UNION ALL (SELECT 1 FROM blob_holds WHERE sha256 = $1 LIMIT 1)',
      [sha256],
    );
    if ((rowCount ?? 0) === 0) await blobs.delete(sha256);
  }
}

/** Runs `work` in one transaction of `db`, then deletes the blobs it left unreferenced. */
export async function writeWithRefs<T>(
  db: PgDatabase,
  blobs: BlobStore,
  work: (tx: Queryable, dropped: string[]) => Promise<T>,
): Promise<T> {
  const dropped: string[] = [];
  const result = await db.transaction((tx) => work(tx, dropped));
  await collectUnreferenced(db, blobs, dropped);
  return result;
}

/** Marks blobs as held by `holder` (a run, a registry source) until the holder is gone. */
export async function holdBlobs(tx: Queryable, holder: string, sha256s: readonly string[]): Promise<void> {
  if (sha256s.length === 0) return;
  await tx.query(
    `INSERT INTO blob_holds (holder, sha256) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING`,
    [holder, [...new Set(sha256s)]],
  );
}
