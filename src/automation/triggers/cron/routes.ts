// GET /schedules: a Sluice extension, outside the product's API (docs/automation.md,
// "Triggers"). Lists the caller's tenant's schedules (each runs as the tenant that synced it)
// with their next tick times; another tenant's schedules are not there.

import { Type } from '@sinclair/typebox';
import type { ApiRoute } from '../../http/api.js';
import { principalOf } from '../../http/principal.js';
import { route } from '../../http/route.js';
import type { ScheduleRecord, ScheduleStore } from './schedule.js';
import { expressionOf } from './trigger.js';

const MAX_NEXT = 20;

const Iso = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

const ScheduleView = Type.Object(
  {
    automationId: Type.String(),
    type: Type.Union([Type.Literal('workflow'), Type.Literal('agent')]),
    slug: Type.String(),
    version: Type.String({ description: 'the release whose manifest names the schedule' }),
    schedule: Type.String(),
    timezone: Type.String(),
    overlap: Type.Union([Type.Literal('skip'), Type.Literal('allow')]),
    input: Type.Record(Type.String(), Type.Unknown()),
    nextFireAt: Iso,
    nextFireTimes: Type.Array(Type.String({ format: 'date-time' })),
    lastFireAt: Iso,
    lastRunId: Type.Union([Type.String(), Type.Null()]),
    fired: Type.Integer(),
    skipped: Type.Integer(),
    missed: Type.Integer({ description: 'ticks passed over by catch-up after a gap' }),
    lastSkippedAt: Iso,
    lastSkipReason: Type.Union([Type.String(), Type.Null()]),
    registeredAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Schedule', additionalProperties: false },
);

const ListSchedulesResponse = Type.Object(
  { data: Type.Array(ScheduleView), total: Type.Integer() },
  { additionalProperties: false },
);

const Query = Type.Object({
  next: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_NEXT,
      description: `next tick times listed (1 to ${MAX_NEXT}, default 3)`,
    }),
  ),
});

const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

export function scheduleView(s: ScheduleRecord, next: number) {
  const times =
    s.nextFireAt === null ? [] : [s.nextFireAt, ...expressionOf(s.trigger).nextTicks(next - 1, s.nextFireAt)];
  return {
    automationId: s.automationId,
    type: s.type,
    slug: s.slug,
    version: s.version,
    schedule: s.trigger.schedule,
    timezone: s.trigger.timezone ?? 'UTC',
    overlap: s.trigger.overlap,
    input: s.trigger.input,
    nextFireAt: iso(s.nextFireAt),
    nextFireTimes: times.slice(0, next).map((t) => new Date(t).toISOString()),
    lastFireAt: iso(s.lastFireAt),
    lastRunId: s.lastRunId,
    fired: s.fired,
    skipped: s.skipped,
    missed: s.missed,
    lastSkippedAt: iso(s.lastSkippedAt),
    lastSkipReason: s.lastSkipReason,
    registeredAt: new Date(s.registeredAt).toISOString(),
  };
}

export function scheduleRoutes(store: ScheduleStore): ApiRoute[] {
  return [
    route({
      method: 'GET',
      path: '/schedules',
      operationId: 'schedulesList',
      summary:
        "Sluice extension: the tenant's registered schedules (cron triggers) with their next tick times",
      tag: 'schedules',
      query: Query,
      responses: { 200: { description: 'schedules', schema: ListSchedulesResponse } },
      async handle({ req, query }) {
        const tenant = principalOf(req).tenant;
        const data = (await store.list(tenant)).map((s) => scheduleView(s, query.next ?? 3));
        return { data, total: data.length };
      },
    }),
  ];
}
