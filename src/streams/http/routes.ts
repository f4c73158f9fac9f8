// The streams HTTP API: the spec's five endpoints plus the Confluent-v2-style extensions.
// Produce, topic creation and admin, and consumer-group admin need `streams:write`; everything else (reading topics, consumer
// instances, fetching, commits) needs `streams:read`.

import {
  Router,
  checkContentType,
  parseJsonBody,
  type HttpResponse,
  type RouteOptions,
} from '../../core/http/index.js';
import type { SpanAttributes, Tracing } from '../../core/tracing/index.js';
import { ErrorCodes, StreamsError, topicNotFound, unprocessable } from '../errors.js';
import type { ConsumerGroups } from '../groups/coordinator.js';
import type { Partitioner } from '../log/partitioner.js';
import type { TopicInfo, TopicLog } from '../log/types.js';
import { offsetForTime } from '../log/offset-for-time.js';
import type { StreamsSettings } from '../settings.js';
import { optionalJson } from './body.js';
import { handler } from './errors.js';
import { createInstance } from './consumers.js';
import { BODY_TYPES, PLAIN_JSON, STREAMS_JSON, negotiate } from './media.js';
import { registerConfluentRoutes } from './confluent/routes.js';
import { isKafkaRecordsBody } from './confluent/media.js';
import { appendRecords, type Queued } from './produce.js';
import { scanProduce } from './produce-scan.js';
import { registerInstanceRoutes } from './instance-routes.js';
import { pushHandlers } from './push.js';
import { registerGroupViews } from './groups-view.js';
import { registerGroupAdmin } from './group-admin.js';
import { renderRecords } from './render.js';
import { produceAttributes, traced } from './tracing.js';
import { applyConfigs, parseConfigs, renderConfigs } from './topic-configs.js';
import {
  checkName,
  parseConsumerConfig,
  parseProduce,
  parseSubscription,
  parseTopicCreation,
  queryInt,
} from './validate.js';

export interface StreamsDeps {
  readonly log: TopicLog;
  readonly groups: ConsumerGroups;
  readonly settings: StreamsSettings;
  readonly partitioner: Partitioner;
  /** Base URL of this listener, for base_uri when the request has no usable Host. */
  readonly baseUrl: () => string;
  /** Spans of produce and fetch requests (NO_TRACING when TRACING_ENABLED is false). */
  readonly tracing: Tracing;
}

const READ: RouteOptions = { scope: 'streams:read' };
const WRITE: RouteOptions = { scope: 'streams:write' };
const INSTANCE = '/streams/consumers/:group/instances/:instance';

export function buildRouter(deps: StreamsDeps): Router {
  const { log, groups, settings } = deps;
  const router = new Router();

  const sendJson = (res: HttpResponse, type: string, body: unknown): void => {
    res.header('content-type', type).json(body);
  };

  // --- topics -------------------------------------------------------------------------------
  const createTopic = handler(async (req, res) => {
    const body = await req.json(BODY_TYPES);
    const { name, partitions, configs } = parseTopicCreation(
      body,
      settings.defaultPartitions,
      settings.maxPartitions,
    );
    if (log.topics().length >= settings.maxTopics) {
      throw unprocessable(`the service already holds ${settings.maxTopics} topics (STREAMS_MAX_TOPICS)`);
    }
    const defaults = settings.defaultRetention;
    await log.createTopic(name, partitions, applyConfigs(defaults, configs, defaults));
    sendJson(res, PLAIN_JSON, {
      message: `topic '${name}' created with ${partitions} partition${partitions === 1 ? '' : 's'}`,
    });
  });
  // The spec's endpoint line omits the /streams prefix and its sample includes it: both answer.
  router.post('/streams/topics/topic', createTopic, WRITE);
  // Without the prefix the path is also Confluent's produce to a topic named "topic": a body
  // that says it carries Kafka records goes there.
  const confluent = registerConfluentRoutes(router, deps);
  const produceToTopic = confluent.produceTo('topic');
  router.post(
    '/topics/topic',
    (req, res) =>
      isKafkaRecordsBody(req.headers['content-type']) ? produceToTopic(req, res) : createTopic(req, res),
    WRITE,
  );

  router.get(
    '/streams/topics',
    handler((req, res) => {
      sendJson(
        res,
        negotiate(req.headers.accept, false),
        log.topics().map((t) => t.name),
      );
    }),
    READ,
  );
  const describeTopic = (name: string) =>
    handler(async (req, res) => {
      const topic = log.topic(name || (req.params.topic ?? ''));
      if (!topic) throw topicNotFound(name || (req.params.topic ?? ''));
      const type = negotiate(req.headers.accept, false);
      sendJson(res, type, await describe(log, topic));
    });
  router.get('/streams/topics/:topic', describeTopic(''), READ);
  // A topic literally named "topic" shares its path with the creation endpoint.
  router.get('/streams/topics/topic', describeTopic('topic'), READ);

  // Topic admin (extensions), with the scope that creates topics.
  router.patch(
    '/streams/topics/:topic',
    handler(async (req, res) => {
      const name = req.params.topic ?? '';
      const body = await req.json(BODY_TYPES);
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw new StreamsError(
          400,
          ErrorCodes.topicInvalid,
          'body must be a JSON object like {"configs":[…]}',
        );
      const extra = Object.keys(body).filter((k) => k !== 'configs');
      if (extra.length > 0)
        throw new StreamsError(
          400,
          ErrorCodes.topicInvalid,
          `unknown field '${extra[0]}'; accepted: configs`,
        );
      const changes = parseConfigs((body as { configs?: unknown }).configs ?? null, true);
      const topic = log.topic(name);
      if (!topic) throw topicNotFound(name);
      const updated = await log.updateTopic(
        name,
        applyConfigs(topic.configs, changes, settings.defaultRetention),
      );
      sendJson(res, negotiate(req.headers.accept, false), await describe(log, updated));
    }),
    WRITE,
  );
  router.delete(
    '/streams/topics/:topic',
    handler(async (req, res) => {
      const name = req.params.topic ?? '';
      if (!log.topic(name)) throw topicNotFound(name);
      await log.deleteTopic(name);
      groups.forgetTopic(name);
      await groups.flush();
      res.send(undefined, 204);
    }),
    WRITE,
  );

  // Direct, stateless read of one partition (Confluent v2's and Redpanda's partition fetch):
  // no group, no position, nothing committed. Useful for inspection and replays.
  router.get(
    '/streams/topics/:topic/partitions/:partition/records',
    handler(async (req, res) => {
      const type = negotiate(req.headers.accept, true);
      const name = req.params.topic ?? '';
      const topic = log.topic(name);
      if (!topic) throw topicNotFound(name);
      const raw = req.params.partition ?? '';
      const partition = /^\d{1,9}$/.test(raw) ? Number(raw) : -1;
      if (partition < 0 || partition >= topic.partitions) {
        throw new StreamsError(
          404,
          ErrorCodes.partitionNotFound,
          `partition ${JSON.stringify(raw)} of topic '${name}' not found (the topic has partitions 0..${topic.partitions - 1})`,
        );
      }
      // -1: no offset given, start at the partition's beginning — or, with `timestamp` (ms), at
      // the first record stamped at or after it.
      const asked = queryInt(req.query, 'offset', -1, Number.MAX_SAFE_INTEGER);
      const since = queryInt(req.query, 'timestamp', -1, Number.MAX_SAFE_INTEGER);
      if (asked >= 0 && since >= 0) throw unprocessable('give either offset or timestamp, not both');
      const offset =
        asked >= 0
          ? asked
          : since >= 0
            ? await offsetForTime(log, topic, partition, since)
            : await log.beginningOffset(topic, partition);
      const count = Math.max(
        1,
        queryInt(req.query, 'count', settings.fetchMaxRecords, settings.fetchMaxRecords),
      );
      const maxBytes = Math.max(
        1,
        queryInt(req.query, 'max_bytes', settings.fetchMaxBytesDefault, settings.fetchMaxBytesLimit),
      );
      const records = await log.read(topic, partition, offset, {
        maxRecords: count,
        maxBytes,
        atLeastOne: true,
      });
      res
        .header('content-type', type)
        .send(renderRecords(records.map((record) => ({ topic: name, record }))));
    }),
    READ,
  );

  // --- produce ------------------------------------------------------------------------------
  /**
   * A /streams produce body read, checked and handed to the log. Synchronous, so that nothing
   * of the parsed request outlives this call but the log's promise (and the span's attributes).
   */
  const queueProduce = (
    bytes: Buffer,
    name: string,
    tracing: boolean,
  ): { queued: Queued; attributes: SpanAttributes | undefined } => {
    const now = Date.now();
    // The plain body form in one pass (produce-scan.ts); anything else, errors included, the
    // usual way, in the usual order: the body's JSON, the topic, the records.
    const scanned = scanProduce(bytes, settings, now);
    const value = scanned ? undefined : parseJsonBody(bytes);
    const topic = log.topic(name);
    if (!topic) throw topicNotFound(name);
    const parsed =
      scanned && scanned.maxPartition < topic.partitions
        ? scanned.records
        : parseProduce(scanned ? parseJsonBody(bytes) : value, topic, settings, now, undefined, bytes);
    const queued = appendRecords(log, deps.partitioner, topic, parsed);
    return { queued, attributes: tracing ? produceAttributes(parsed, queued.partitions) : undefined };
  };
  router.post(
    '/streams/topic/:topic',
    handler(async (req, res) => {
      const name = req.params.topic ?? '';
      const { partitions, offsets } = await traced(
        deps.tracing,
        req,
        'streams.produce',
        { 'streams.topic': name },
        async (span) => {
          checkContentType(req.headers['content-type'], BODY_TYPES);
          const { queued, attributes } = queueProduce(await req.body(), name, span !== undefined);
          const stored = { partitions: queued.partitions, offsets: await queued.offsets };
          if (attributes) span?.setAttributes(attributes);
          return stored;
        },
      );
      let text = '{"offsets":[';
      for (let i = 0; i < offsets.length; i++) {
        text += `${i > 0 ? ',' : ''}{"partition":${partitions[i]},"offset":${offsets[i]}}`;
      }
      res.header('content-type', negotiate(req.headers.accept, false)).send(text + ']}');
    }),
    WRITE,
  );

  // --- consumer instances -------------------------------------------------------------------
  router.post(
    '/streams/consumers/:group',
    handler(async (req, res) => {
      const group = req.params.group ?? '';
      const body = await optionalJson(req, BODY_TYPES);
      if (typeof body === 'object' && body !== null && 'records' in body) {
        throw unprocessable(
          `this endpoint creates consumer instances in group '${group}'. To produce records, POST {"records":[...]} to /streams/topic/<topic_name> with Content-Type: ${STREAMS_JSON}`,
          ErrorCodes.invalidConsumerConfig,
        );
      }
      const type = negotiate(req.headers.accept, true);
      checkName('consumer group', group, ErrorCodes.invalidConsumerConfig);
      const creation = parseConsumerConfig(body, settings.fetchTimeoutMaxMs);
      sendJson(res, type, await createInstance(deps, req, group, creation, '/streams'));
    }),
    READ,
  );

  // --- one instance: delete, subscription, records, offsets and positions ------------------
  registerInstanceRoutes(
    router,
    deps,
    {
      instancePath: INSTANCE,
      bodyTypes: BODY_TYPES,
      send: (req, res, body) => sendJson(res, negotiate(req.headers.accept, false), body),
      // The spec says 200 with an empty body (Confluent answers 204).
      subscribed: 200,
      subscription: parseSubscription,
      recordsType: (req) => negotiate(req.headers.accept, true),
      renderRecords: (records) => renderRecords(records),
      answerCommit: (_req, res) => res.send(undefined, 204),
      uncommitted: 'list',
    },
    READ,
  );

  // --- consumer group views (console, operators) ---------------------------------------------
  registerGroupViews(router, { groups, log }, READ);
  registerGroupAdmin(router, groups, WRITE);

  // --- push consume -------------------------------------------------------------------------
  router.ws(`${INSTANCE}/ws`, pushHandlers(groups, settings), {
    ...READ,
    maxPayloadBytes: settings.wsMaxPayloadBytes,
  });

  return router;
}

async function describe(log: TopicLog, topic: TopicInfo): Promise<unknown> {
  const partitions = await Promise.all(
    Array.from({ length: topic.partitions }, async (_, p) => ({
      partition: p,
      beginning_offset: await log.beginningOffset(topic, p),
      end_offset: await log.endOffset(topic, p),
    })),
  );
  return {
    name: topic.name,
    partitions_count: topic.partitions,
    created_at: new Date(topic.createdAt).toISOString(),
    configs: renderConfigs(topic.configs),
    partitions,
  };
}
