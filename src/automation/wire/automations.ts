// Automation collection shapes (SDK types ListAutomationsResponse … AutomationsSyncResponse).

import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { AutomationType, Bool, Closed, Nullable, OneOf, OpenRecord, Page, Str } from './common.js';

export const AutomationTriggerState = Closed(
  { api: Bool(), email: Bool(), manual: Bool(), cron: Bool() },
  { $id: 'AutomationTriggerState' },
);
export type AutomationTriggerState = Static<typeof AutomationTriggerState>;

const SummaryFields = {
  id: Str(
    'Implementation id for the automation. Workflow automations use workflow ids; agent automations use agent workflow ids.',
  ),
  type: AutomationType,
  slug: Str(),
  name: Nullable(Str()),
  description: Type.Optional(Nullable(Str())),
  status: Type.Optional(Str()),
  version: Type.Optional(Nullable(Str())),
  triggers: Type.Optional(AutomationTriggerState),
  implementationAvailable: Type.Optional(
    Bool('False when the automations registry row exists but the implementation row is missing.'),
  ),
  createdAt: Str(),
  updatedAt: Type.Optional(Str()),
};

export const AutomationSummary = Closed(SummaryFields, { $id: 'AutomationSummary' });
export type AutomationSummary = Static<typeof AutomationSummary>;

export const AutomationDetail = Closed(
  {
    ...SummaryFields,
    inputSchema: Type.Optional(Nullable(OpenRecord())),
    outputSchema: Type.Optional(Nullable(OpenRecord())),
  },
  { $id: 'AutomationDetail' },
);
export type AutomationDetail = Static<typeof AutomationDetail>;

export const ListAutomationsResponse = Page(AutomationSummary, 'ListAutomationsResponse');
export type ListAutomationsResponse = Static<typeof ListAutomationsResponse>;

export const AutomationVersion = Closed(
  {
    id: Str(),
    automationId: Str(),
    version: Nullable(Str()),
    sourceRef: Type.Optional(Nullable(Str())),
    isCurrent: Type.Optional(Bool()),
    createdAt: Type.Optional(Str()),
  },
  { $id: 'AutomationVersion' },
);
export type AutomationVersion = Static<typeof AutomationVersion>;

export const ListAutomationVersionsResponse = Page(AutomationVersion, 'ListAutomationVersionsResponse');
export type ListAutomationVersionsResponse = Static<typeof ListAutomationVersionsResponse>;

export const AutomationTriggersResponse = Closed(
  { automationId: Str(), type: AutomationType, triggers: AutomationTriggerState },
  { $id: 'AutomationTriggersResponse' },
);
export type AutomationTriggersResponse = Static<typeof AutomationTriggersResponse>;

/** The SDK declares this 200 body inline; its alias type is AutomationsSyncResponse. */
export const AutomationsSyncResponse = Closed(
  {
    automation: Closed({
      id: Str(),
      type: OneOf(['agent', 'workflow'] as const),
      slug: Str(),
      status: OneOf(['active', 'archived'] as const),
      updatedAt: Str(),
    }),
    release: Closed({ version: Str(), tag: Str(), commit: Str() }),
    warnings: Type.Array(Str()),
  },
  { $id: 'AutomationsSyncResponse' },
);
export type AutomationsSyncResponse = Static<typeof AutomationsSyncResponse>;

export const AUTOMATION_SCHEMAS: readonly TSchema[] = [
  AutomationTriggerState,
  AutomationSummary,
  AutomationDetail,
  ListAutomationsResponse,
  AutomationVersion,
  ListAutomationVersionsResponse,
  AutomationTriggersResponse,
  AutomationsSyncResponse,
];
