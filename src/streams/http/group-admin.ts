// Administering a stopped consumer group (extensions, docs/streams.md "Resetting and deleting
// a consumer group"), with the scope that writes, like topic admin:
//   POST   /streams/consumer-groups/<group>/offsets/reset   {to, offset?, timestamp?, topics?, dry_run?}
//   DELETE /streams/consumer-groups/<group>
// The router checks the key and scope before a handler reads the body.

import type { Router, RouteOptions } from '../../core/http/index.js';
import { ErrorCodes, unprocessable } from '../errors.js';
import type { ConsumerGroups, ResetRequest, ResetTarget } from '../groups/coordinator.js';
import { BODY_TYPES } from './media.js';
import { handler } from './errors.js';
import { checkName } from './validate.js';

const TARGETS = ['earliest', 'latest', 'offset', 'time'] as const;
const FIELDS = new Set(['to', 'offset', 'timestamp', 'topics', 'dry_run']);

export function registerGroupAdmin(router: Router, groups: ConsumerGroups, options: RouteOptions): void {
  router.post(
    '/streams/consumer-groups/:group/offsets/reset',
    handler(async (req, res) => {
      const group = checkName('consumer group', req.params.group ?? '', ErrorCodes.invalidConsumerConfig);
      const request = parseReset(await req.json(BODY_TYPES));
      const entries = await groups.resetOffsets(group, request);
      res.json({
        group,
        dry_run: request.dryRun,
        offsets: entries.map((e) => ({
          topic: e.topic,
          partition: e.partition,
          previous_offset: e.previous ?? null,
          offset: e.offset,
        })),
      });
    }),
    options,
  );
  router.delete(
    '/streams/consumer-groups/:group',
    handler(async (req, res) => {
      const group = checkName('consumer group', req.params.group ?? '', ErrorCodes.invalidConsumerConfig);
      await groups.deleteGroup(group);
      res.send(undefined, 204);
    }),
    options,
  );
}

/** The reset body; every mistake is a 422 naming the field. */
export function parseReset(body: unknown): ResetRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw unprocessable('body must be a JSON object like {"to":"earliest"}');
  const fields = body as Record<string, unknown>;
  for (const key of Object.keys(fields))
    if (!FIELDS.has(key)) throw unprocessable(`unknown field '${key}' (use ${[...FIELDS].join(', ')})`);
  const to = fields.to;
  if (!TARGETS.includes(to as (typeof TARGETS)[number]))
    throw unprocessable(`to must be one of ${TARGETS.join(', ')}, got ${JSON.stringify(to)}`);
  const needs = (field: 'offset' | 'timestamp', when: string) => {
    if (to === when && fields[field] === undefined) throw unprocessable(`to "${when}" needs ${field}`);
    if (to !== when && fields[field] !== undefined)
      throw unprocessable(`${field} goes with to "${when}" only`);
  };
  needs('offset', 'offset');
  needs('timestamp', 'time');
  let target: ResetTarget;
  if (to === 'offset') target = { to, offset: parseOffset(fields.offset) };
  else if (to === 'time') target = { to, timestamp: parseTimestamp(fields.timestamp) };
  else target = { to: to as 'earliest' | 'latest' };
  const dryRun = fields.dry_run ?? false;
  if (typeof dryRun !== 'boolean') throw unprocessable('dry_run must be true or false');
  return { target, topics: parseTopics(fields.topics), dryRun };
}

function parseOffset(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw unprocessable(`offset must be an integer ≥ 0, got ${JSON.stringify(value)}`);
  return value;
}

/** Milliseconds since the epoch, or an ISO 8601 date-time with its zone. */
function parseTimestamp(value: unknown): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T.+(Z|[+-]\d{2}:\d{2})$/.test(value)) {
    const ms = Date.parse(value);
    if (Number.isFinite(ms) && ms >= 0) return ms;
  }
  throw unprocessable(
    `timestamp must be milliseconds since the epoch or an ISO 8601 time with a zone (2026-01-31T12:00:00Z), got ${JSON.stringify(value)}`,
  );
}

function parseTopics(value: unknown): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length === 0)
    throw unprocessable('topics must be a non-empty array of topic names');
  return [...new Set(value.map((t) => checkName('topic', t, ErrorCodes.invalidConsumerConfig)))];
}
