// Registry records as the public wire shapes (src/automation/wire/automations.ts). Sluice-only
// detail — the agent model, the release tag and commit, email aliases and the cron expression —
// stays in the manifest and the git tag (docs/automation.md, "Automations"): the SDK's types have
// no field for it.

import type {
  AutomationDetail,
  AutomationSummary,
  AutomationTriggerState,
  AutomationTriggersResponse,
  AutomationVersion,
  AutomationsSyncResponse,
} from '../wire/automations.js';
import type { Triggers } from './manifest.js';
import type { AutomationRecord, SyncResult, VersionRecord } from './service.js';

export function triggerState(t: Triggers): AutomationTriggerState {
  return { api: t.api, email: t.email.enabled, manual: t.manual, cron: t.cron !== null };
}

export function automationSummary(a: AutomationRecord): AutomationSummary {
  return {
    id: a.id,
    type: a.type,
    slug: a.slug,
    name: a.name,
    description: a.description,
    status: a.status,
    version: a.version,
    triggers: triggerState(a.triggers),
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
  };
}

export function automationDetail(a: AutomationRecord): AutomationDetail {
  return { ...automationSummary(a), inputSchema: a.inputSchema, outputSchema: a.outputSchema };
}

export function automationVersion(v: VersionRecord, current: AutomationRecord): AutomationVersion {
  return {
    id: v.id,
    automationId: v.automationId,
    version: v.version,
    sourceRef: v.sourceRef,
    isCurrent: v.version === current.version,
    createdAt: v.createdAt,
  };
}

export function triggersView(a: AutomationRecord): AutomationTriggersResponse {
  return { automationId: a.id, type: a.type, triggers: triggerState(a.triggers) };
}

/** `changed` is the service's own flag (callers compare `automation.updatedAt` instead). */
export function syncView(r: SyncResult): AutomationsSyncResponse {
  return { automation: r.automation, release: r.release, warnings: r.warnings };
}
