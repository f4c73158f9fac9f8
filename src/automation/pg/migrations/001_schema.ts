// Schema 1: every automation record. A TypeScript module rather than a .sql file so that it ships
// in the build (tsc emits only .ts). Each table keeps as columns what queries filter or sort
// on (tenant, automation, status, times, ids) and the full record as json, the shape the
// stores read and write (json, not jsonb: jsonb cannot hold U+0000, which callers' inputs,
// outputs and events may contain; records are read whole, and filtered on only by the run
// list's review and source-ref conditions); times that the records keep as epoch milliseconds stay bigint so that
// cursors compare exactly. Ids that orders end on are COLLATE "C" (byte order), the order the
// LMDB stores and the JavaScript callers compare strings in, whatever the database's locale.
// Never edit a migration that shipped: add the next one.

import type { Migration } from '../migrations.js';

const sql = `
CREATE TABLE meta (
  key text PRIMARY KEY,
  value jsonb NOT NULL
);

-- Registry: automations, their aliases (workflows.<slug> → id), versions and git releases.
CREATE TABLE automations (
  id text PRIMARY KEY,
  type text NOT NULL,
  slug text NOT NULL,
  status text NOT NULL,
  updated_at timestamptz NOT NULL,
  record json NOT NULL
);
CREATE INDEX automations_slug ON automations (type, slug);

CREATE TABLE automation_aliases (
  alias text PRIMARY KEY,
  automation_id text NOT NULL
);

CREATE TABLE automation_versions (
  automation_id text NOT NULL,
  -- The version with each number zero-padded, so text order is version order.
  sort_key text COLLATE "C" NOT NULL,
  version text NOT NULL,
  commit_sha text NOT NULL,
  record json NOT NULL,
  PRIMARY KEY (automation_id, sort_key)
);

-- Releases (package@version tags) known to the cluster; each node fetches the commit a run pins.
CREATE TABLE releases (
  type text NOT NULL,
  slug text NOT NULL,
  version text NOT NULL,
  tag text NOT NULL,
  commit_sha text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  record jsonb NOT NULL DEFAULT '{}',
  PRIMARY KEY (type, slug, version)
);

-- Runs. created_at / completed_at are the record's epoch milliseconds. The queue columns belong
-- to run-queue.ts: queue_state NULL (never queued), queued, claimed (by node, until
-- lease_expires_at on the database clock) or done; attempt counts claims and fences a node
-- that lost its lease.
CREATE TABLE runs (
  id text COLLATE "C" PRIMARY KEY,
  tenant text NOT NULL,
  automation_id text NOT NULL,
  type text NOT NULL,
  status text NOT NULL,
  trigger_type text NOT NULL,
  triggered_by text NOT NULL,
  batch_id text,
  example_id text,
  created_at bigint NOT NULL,
  completed_at bigint,
  sample_rank double precision NOT NULL,
  record json NOT NULL,
  -- What the run list's review and source-ref filters read (the review summary, version and
  -- git refs), as jsonb with U+0000 replaced: json operators on the record itself would fail
  -- on a record holding U+0000 anywhere.
  list_fields jsonb NOT NULL DEFAULT '{}',
  queue_state text CHECK (queue_state IN ('queued', 'claimed', 'done')),
  queued_at timestamptz,
  node text,
  lease_expires_at timestamptz,
  attempt integer NOT NULL DEFAULT 0,
  cancel_requested boolean NOT NULL DEFAULT false
);
-- Run list pages: one index per filter the list API has, each ending in (created_at, id) so a
-- page is a range scan from the cursor in either order.
CREATE INDEX runs_tenant_created ON runs (tenant, created_at DESC, id DESC);
CREATE INDEX runs_tenant_completed ON runs (tenant, completed_at DESC, id DESC) WHERE completed_at IS NOT NULL;
CREATE INDEX runs_tenant_automation ON runs (tenant, automation_id, created_at DESC, id DESC);
CREATE INDEX runs_tenant_status ON runs (tenant, status, created_at DESC, id DESC);
CREATE INDEX runs_tenant_type ON runs (tenant, type, created_at DESC, id DESC);
CREATE INDEX runs_tenant_trigger ON runs (tenant, trigger_type, created_at DESC, id DESC);
CREATE INDEX runs_tenant_by ON runs (tenant, triggered_by, created_at DESC, id DESC);
CREATE INDEX runs_tenant_batch ON runs (tenant, batch_id, created_at DESC, id DESC) WHERE batch_id IS NOT NULL;
CREATE INDEX runs_tenant_example ON runs (tenant, example_id, created_at DESC, id DESC) WHERE example_id IS NOT NULL;
CREATE INDEX runs_unfinished ON runs (created_at, id)
  WHERE status IN ('created', 'pending', 'running', 'waiting', 'finalizing');
-- The queue: oldest queued first, expired leases, running counts per tenant and automation.
CREATE INDEX runs_queued ON runs (queued_at, id) WHERE queue_state = 'queued';
CREATE INDEX runs_claimed_lease ON runs (lease_expires_at) WHERE queue_state = 'claimed';
CREATE INDEX runs_claimed_tenant ON runs (tenant) WHERE queue_state = 'claimed';
CREATE INDEX runs_claimed_automation ON runs (automation_id) WHERE queue_state = 'claimed';

CREATE TABLE run_details (
  run_id text PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
  detail json NOT NULL
);

CREATE TABLE run_events (
  run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  seq integer NOT NULL,
  event json NOT NULL,
  PRIMARY KEY (run_id, seq)
);

-- No reference to runs: results are kept by run id whatever writes them first (as in LMDB).
CREATE TABLE scores (
  run_id text NOT NULL,
  id text COLLATE "C" NOT NULL,
  record json NOT NULL,
  PRIMARY KEY (run_id, id)
);

CREATE TABLE reviews (
  tenant text NOT NULL,
  run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  automation_id text NOT NULL,
  record json NOT NULL,
  PRIMARY KEY (tenant, run_id)
);

-- Content-addressed blobs in chunks (blob-store.ts). A blob being written has no sha256 yet
-- (state 'writing'); it gets its hash when complete, unless the same content is already there.
-- A deleted blob gives its hash up (state 'deleted', deleted_at) and keeps its chunks for the
-- reads opened before, until removeAbandoned sweeps it.
-- Chunks are stored uncompressed out of line (STORAGE EXTERNAL): ranges read only the pages
-- they need, and uploads are mostly compressed formats already.
CREATE TABLE blobs (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  sha256 text UNIQUE,
  size bigint NOT NULL DEFAULT 0,
  chunk_size integer NOT NULL,
  state text NOT NULL CHECK (state IN ('writing', 'ready', 'deleted')),
  created_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);
CREATE INDEX blobs_writing ON blobs (created_at) WHERE state = 'writing';
CREATE INDEX blobs_deleted ON blobs (deleted_at) WHERE state = 'deleted';

CREATE TABLE blob_chunks (
  blob_id bigint NOT NULL REFERENCES blobs (id) ON DELETE CASCADE,
  seq integer NOT NULL,
  data bytea NOT NULL,
  PRIMARY KEY (blob_id, seq)
);
ALTER TABLE blob_chunks ALTER COLUMN data SET STORAGE EXTERNAL;

-- References to a blob from files, upload sessions and dataset examples; none left: removed.
CREATE TABLE blob_refs (
  sha256 text PRIMARY KEY,
  refs integer NOT NULL CHECK (refs > 0)
);

CREATE TABLE files (
  id text PRIMARY KEY,
  tenant text NOT NULL,
  sha256 text NOT NULL,
  created_at timestamptz NOT NULL,
  record json NOT NULL
);
CREATE INDEX files_tenant_created ON files (tenant, created_at DESC, id DESC);

CREATE TABLE file_uploads (
  id text PRIMARY KEY,
  tenant text NOT NULL,
  idempotency_key text,
  state text NOT NULL,
  expires_at bigint NOT NULL,
  record json NOT NULL
);
CREATE UNIQUE INDEX file_uploads_key ON file_uploads (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX file_uploads_expiry ON file_uploads (expires_at);

CREATE TABLE dataset_examples (
  tenant text NOT NULL,
  automation_id text NOT NULL,
  id text COLLATE "C" NOT NULL,
  name text NOT NULL,
  row_order double precision,
  record json NOT NULL,
  PRIMARY KEY (tenant, automation_id, id)
);
CREATE INDEX dataset_examples_order ON dataset_examples (tenant, automation_id, row_order, id);
CREATE INDEX dataset_examples_name ON dataset_examples (tenant, automation_id, name);

CREATE TABLE evaluator_configs (
  tenant text NOT NULL,
  automation_id text NOT NULL,
  updated_at timestamptz NOT NULL,
  record json NOT NULL,
  PRIMARY KEY (tenant, automation_id)
);

CREATE TABLE experiments (
  tenant text NOT NULL,
  id text COLLATE "C" NOT NULL,
  automation_id text NOT NULL,
  status text NOT NULL,
  created_at bigint NOT NULL,
  record json NOT NULL,
  PRIMARY KEY (tenant, id)
);
CREATE INDEX experiments_automation ON experiments (tenant, automation_id, created_at DESC, id DESC);
CREATE INDEX experiments_unfinished ON experiments (status) WHERE status <> 'completed';

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  tenant text NOT NULL,
  user_id text NOT NULL,
  hash text NOT NULL,
  created_at timestamptz NOT NULL,
  revoked_at timestamptz,
  record jsonb NOT NULL
);
CREATE INDEX api_keys_tenant ON api_keys (tenant, created_at);
`;

const migration: Migration = { version: 1, name: 'schema', sql };
export default migration;
