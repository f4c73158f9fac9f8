// Schedules follow syncs (docs/automation.md, "Triggers"): the sync of a release whose manifest
// names `triggers.cron` registers its schedule, as the tenant of the key that synced it; the
// sync of a release without one removes it. The trigger's input is checked against the input
// schema before the sync writes anything, so an invalid one fails the sync (400). Syncing the
// same release with the same trigger again changes nothing (tenant, next tick and counts stay).

import type { Logger } from '../../../core/log.js';
import type { ScriptPool } from '../../evals/index.js';
import { checkSchema } from '../../evals/index.js';
import { ApiError } from '../../errors.js';
import type { Manifest } from '../../registry/manifest.js';
import type { AutomationRecord, SyncHook, SyncedBy } from '../../registry/service.js';
import type { ScheduleRecord, ScheduleStore } from './schedule.js';
import { expressionOf, type CronTrigger } from './trigger.js';

export interface RegistrationOptions {
  store: ScheduleStore;
  schemaPool: ScriptPool | undefined;
  log: Logger;
  /** A schedule was registered or changed: look for due ticks. */
  changed(): void;
  now?: () => number;
}

const sameTrigger = (a: CronTrigger, b: CronTrigger) => JSON.stringify(a) === JSON.stringify(b);

export function scheduleRegistration(o: RegistrationOptions): SyncHook {
  const now = o.now ?? Date.now;
  return {
    async check(manifest, automation) {
      const cron = manifest.triggers.cron;
      if (!cron || !manifest.inputSchema) return;
      const field = 'manifest.triggers.cron.input';
      const outcome = await checkSchema(manifest.inputSchema, cron.input, o.schemaPool);
      if (!outcome.ok)
        throw new ApiError(422, 'input_schema_failed', outcome.message, [
          { field, message: outcome.message, code: 'input_schema_failed' },
        ]);
      if (!outcome.valid) {
        const issues = outcome.issues.map((e) => {
          const path = e.instancePath.split('/').filter(Boolean).join('.');
          return {
            field: [field, path, e.missingProperty].filter(Boolean).join('.'),
            message: e.message,
            code: 'invalid_manifest',
          };
        });
        throw new ApiError(
          400,
          'invalid_manifest',
          `the cron trigger's input does not match the input schema of ${automation.slug}: ` +
            issues.map((i) => `${i.field}: ${i.message}`).join('; '),
          issues,
        );
      }
    },

    async synced(record: AutomationRecord, manifest: Manifest, by: SyncedBy | undefined) {
      const cron = manifest.triggers.cron;
      const at = now();
      const result = await o.store.update(record.id, (existing) => {
        if (!cron) return existing ? null : undefined;
        if (existing && existing.commit === record.commit && sameTrigger(existing.trigger, cron))
          return undefined;
        // The registry's first start syncs without a caller: no tenant to run the schedule as.
        const tenant = by?.tenant ?? existing?.tenant;
        if (tenant === undefined) return undefined;
        const sameTimes =
          existing !== undefined &&
          existing.trigger.schedule === cron.schedule &&
          existing.trigger.timezone === cron.timezone;
        const next: ScheduleRecord = {
          automationId: record.id,
          type: record.type,
          slug: record.slug,
          tenant,
          version: record.version,
          commit: record.commit,
          trigger: cron,
          nextFireAt: sameTimes ? existing.nextFireAt : expressionOf(cron).next(at),
          lastFireAt: existing?.lastFireAt ?? null,
          lastRunId: existing?.lastRunId ?? null,
          fired: existing?.fired ?? 0,
          skipped: existing?.skipped ?? 0,
          missed: existing?.missed ?? 0,
          lastSkippedAt: existing?.lastSkippedAt ?? null,
          lastSkipReason: existing?.lastSkipReason ?? null,
          registeredAt: at,
        };
        return next;
      });
      const fields = { automation: record.id, package: `${record.type}s/${record.slug}` };
      if (result === null) o.log.info(fields, 'schedule removed: the synced release has no cron trigger');
      else if (result !== undefined) {
        o.log.info(
          {
            ...fields,
            tenant: result.tenant,
            schedule: result.trigger.schedule,
            timezone: result.trigger.timezone ?? 'UTC',
            next: result.nextFireAt === null ? null : new Date(result.nextFireAt).toISOString(),
          },
          'schedule registered',
        );
        o.changed();
      } else if (cron && !by && !(await o.store.get(record.id)))
        o.log.info(
          fields,
          'schedule not registered: sync the automation with an API key to run it as that tenant',
        );
    },
  };
}
