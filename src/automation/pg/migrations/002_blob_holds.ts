// Schema 2: blobs held by things that are not counted in blob_refs, and the registry's sources.
// A run holds the blobs of its input and output files (several nodes read them from the blob
// store: artifacts, reruns, takeovers), and a release commit's git bundle is held by the
// registry, so nodes without a shared git remote can fetch the commit a run pins. A hold is a
// row per (holder, blob); a blob whose last reference count goes away is deleted only when no
// hold names it either (pg/stores/blob-refs.ts). Holders are `run:<run id>` and
// `registry:<commit>`. Never edit a migration that shipped: add the next one.

import type { Migration } from '../migrations.js';

const sql = `
CREATE TABLE blob_holds (
  holder text NOT NULL,
  sha256 text NOT NULL,
  PRIMARY KEY (holder, sha256)
);
CREATE INDEX blob_holds_sha256 ON blob_holds (sha256);

-- A commit of the registry as a git bundle in the blob store (held as registry:<commit>).
CREATE TABLE registry_sources (
  commit_sha text PRIMARY KEY,
  sha256 text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
`;

const migration: Migration = { version: 2, name: 'blob holds and registry sources', sql };
export default migration;
