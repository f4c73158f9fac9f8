// Schema 4: what the retention pass (src/automation/retention) reads. `used_at` is when a node
// last looked a registry bundle up (to publish or fetch its commit): a bundle in use is never
// collected, so a node that remembers a commit as published can rely on its bundle for a while
// (registry/bundles.ts). The index finds the runs that pin a commit without reading every run; it
// reads list_fields (jsonb, U+0000 replaced), as json operators on a record holding U+0000 fail.
// Never edit a migration that shipped: add the next one.

import type { Migration } from '../migrations.js';

const sql = `
ALTER TABLE registry_sources ADD COLUMN used_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX runs_commit ON runs ((list_fields -> 'git' ->> 'commitSha'));
CREATE INDEX runs_completed ON runs (completed_at) WHERE completed_at IS NOT NULL;
`;

const migration: Migration = { version: 4, name: 'retention', sql };
export default migration;
