// Schema 3: the registered schedules of automations (src/automation/triggers/cron/). One row
// per automation; next_fire_at (epoch ms) is the tick to claim next. A node claims a due tick
// by locking the row FOR UPDATE SKIP LOCKED where next_fire_at still names that tick, queues
// the tick's run and moves next_fire_at on in the same transaction: one run per tick, whichever
// nodes look. Never edit a migration that shipped: add the next one.

import type { Migration } from '../migrations.js';

const sql = `
CREATE TABLE automation_schedules (
  automation_id text PRIMARY KEY,
  tenant text NOT NULL,
  next_fire_at bigint,
  record json NOT NULL
);
CREATE INDEX automation_schedules_due ON automation_schedules (next_fire_at) WHERE next_fire_at IS NOT NULL;
CREATE INDEX automation_schedules_tenant ON automation_schedules (tenant, automation_id);
`;

const migration: Migration = { version: 3, name: 'automation schedules', sql };
export default migration;
