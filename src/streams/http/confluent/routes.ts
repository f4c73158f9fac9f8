// Confluent REST Proxy v2 paths (docs.confluent.io "REST Proxy API v2"), served beside /streams
// on the same log and consumer groups, so clients and scripts written for Confluent's proxy work
// unchanged. Validation, partitioning, storing and fetching are the /streams code paths; what
// differs is read and written here: media types, embedded formats, statuses and answer shapes.
// docs/streams.md, "Coming from Confluent REST Proxy", lists every difference.

import {
  checkContentType,
  parseJsonBody,
  type Handler,
  type HttpRequest,
  type HttpResponse,
  type Router,
  type RouteOptions,
} from '../../../core/http/index.js';
import { StreamsError, partitionNotFound, topicNotFound } from '../../errors.js';
import type { ConsumerInstance } from '../../groups/coordinator.js';
import type { TopicInfo } from '../../log/types.js';
import { optionalJson } from '../body.js';
import { createInstance } from '../consumers.js';
import { produceAttributes, traced } from '../tracing.js';
import { handler as streamsHandler } from '../errors.js';
import { registerInstanceRoutes } from '../instance-routes.js';
import { appendRecords } from '../produce.js';
import { scanProduce } from '../produce-scan.js';
import { renderRecords } from '../render.js';
import { configMap } from '../topic-configs.js';
import type { StreamsDeps } from '../routes.js';
import {
  parseConsumerConfig,
  parsePartitions,
  parseProduce,
  parseSubscription,
  type ConsumerDialect,
  type ProduceDialect,
  type ProduceRecord,
  type RecordFormat,
} from '../validate.js';
import { KAFKA_BODY_TYPES, KAFKA_V2, answerType, produceFormat, recordsType } from './media.js';
import { CONSTRAINT_CODE, hasReservedHeader, inFormat, toStoredShape } from './records.js';

// Errors answer in the v2 type, as rest-utils' exception mappers write them.
const handler = (fn: Parameters<typeof streamsHandler>[0]): Handler => streamsHandler(fn, KAFKA_V2);

const READ: RouteOptions = { scope: 'streams:read' };
const WRITE: RouteOptions = { scope: 'streams:write' };
const INSTANCE = '/consumers/:group/instances/:instance';

/**
 * Confluent's default format is binary, named in any case; an unknown one is 422 / 422 and a
 * `fetch.min.bytes` below -1 is 422 / 40001 (kafka-rest entities/v2/CreateConsumerInstanceRequest.java).
 * Its schema formats are refused in validate.ts.
 */
const CONFLUENT_CONSUMERS: ConsumerDialect = {
  accepted: ['binary', 'json'],
  fallback: 'binary',
  hint: 'the embedded formats Sluice serves',
  anyCase: true,
  shapeCode: CONSTRAINT_CODE,
  minBytesCode: 40001,
};

/**
 * Values are any JSON; the schema fields are read and dropped, as kafka-rest does for the json
 * and binary formats (resources/v2/AbstractProduceAction.java); a refused body is 422 / 422
 * (entities/v2/ProduceRequest.java's @NotEmpty records through rest-utils'
 * ConstraintViolationExceptionMapper).
 */
const CONFLUENT_PRODUCE: ProduceDialect = {
  values: 'any',
  schemaFields: 'ignore',
  errorCode: CONSTRAINT_CODE,
};

/** Java's int, which JAX-RS converts the {partition} path segment to. */
const PATH_INT = /^[-+]?\d{1,10}$/;

// Sluice has no brokers; the metadata answers describe one, so clients that read leaders and
// replicas find a consistent single-broker cluster.
const BROKER_ID = 0;

function partitionMeta(partition: number): unknown {
  return {
    partition,
    leader: BROKER_ID,
    replicas: [{ broker: BROKER_ID, leader: true, in_sync: true }],
  };
}

/**
 * The topics of a subscribe body. As kafka-rest's KafkaConsumerState.subscribe: neither `topics`
 * nor `topic_pattern` changes nothing; an empty list goes to Kafka, which unsubscribes (/streams
 * refuses both).
 */
function subscribedTopics(body: unknown): string[] | undefined {
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const given = Object.entries(body).filter(([, value]) => value !== null && value !== undefined);
    if (given.length === 0) return undefined;
    const [field, value] = given[0]!;
    if (given.length === 1 && field === 'topics' && Array.isArray(value) && value.length === 0) return [];
  }
  return parseSubscription(body);
}

export interface ConfluentRoutes {
  /** Produce to a fixed topic: `POST /topics/topic` is also the topic-creation path. */
  produceTo(topic: string): Handler;
}

export function registerConfluentRoutes(router: Router, deps: StreamsDeps): ConfluentRoutes {
  const { log, groups, settings } = deps;

  const send = (req: HttpRequest, res: HttpResponse, body: unknown): void => {
    res.header('content-type', answerType(req.headers.accept)).json(body);
  };
  const topicOf = (name: string): TopicInfo => {
    const topic = log.topic(name);
    if (!topic) throw topicNotFound(name);
    return topic;
  };
  const partitionOf = (topic: TopicInfo, raw: string): number => {
    // A segment that is no int does not match the resource (JAX-RS answers 404, and rest-utils'
    // WebApplicationExceptionMapper puts the status in error_code); an int that names no
    // partition is Errors.partitionNotFoundException (40402).
    const partition = Number(raw);
    if (!PATH_INT.test(raw) || partition < -(2 ** 31) || partition >= 2 ** 31) {
      throw new StreamsError(
        404,
        404,
        `HTTP 404 Not Found: partition ${JSON.stringify(raw)} is not an integer (topic '${topic.name}' has partitions 0..${topic.partitions - 1})`,
      );
    }
    if (partition < 0 || partition >= topic.partitions)
      throw partitionNotFound(topic.name, partition, topic.partitions);
    return partition;
  };
  const instanceOf = (req: HttpRequest): Promise<ConsumerInstance> =>
    groups.acquire(req.params.group ?? '', req.params.instance ?? '');

  // --- metadata -----------------------------------------------------------------------------
  router.get(
    '/topics',
    handler((req, res) =>
      send(
        req,
        res,
        log.topics().map((t) => t.name),
      ),
    ),
    READ,
  );
  const describeTopic = (fixed: string | undefined) =>
    handler((req, res) => {
      const topic = topicOf(fixed ?? req.params.topic ?? '');
      const partitions = [];
      for (let p = 0; p < topic.partitions; p++) partitions.push(partitionMeta(p));
      send(req, res, { name: topic.name, configs: configMap(topic.configs), partitions });
    });
  router.get('/topics/:topic', describeTopic(undefined), READ);
  // The static /topics/topic (topic creation) would otherwise shadow a topic named "topic".
  router.get('/topics/topic', describeTopic('topic'), READ);
  router.get(
    '/topics/:topic/partitions',
    handler((req, res) => {
      const topic = topicOf(req.params.topic ?? '');
      const partitions = [];
      for (let p = 0; p < topic.partitions; p++) partitions.push(partitionMeta(p));
      send(req, res, partitions);
    }),
    READ,
  );
  router.get(
    '/topics/:topic/partitions/:partition',
    handler((req, res) => {
      const topic = topicOf(req.params.topic ?? '');
      send(req, res, partitionMeta(partitionOf(topic, req.params.partition ?? '')));
    }),
    READ,
  );
  router.get(
    '/topics/:topic/partitions/:partition/offsets',
    handler(async (req, res) => {
      const topic = topicOf(req.params.topic ?? '');
      const partition = partitionOf(topic, req.params.partition ?? '');
      // Promise.resolve: the log's offset reads may answer a value or a promise (an async
      // backend), and a promise must never end up serialised as {}.
      send(req, res, {
        beginning_offset: await Promise.resolve(log.beginningOffset(topic, partition)),
        end_offset: await Promise.resolve(log.endOffset(topic, partition)),
      });
    }),
    READ,
  );
  router.get(
    '/brokers',
    handler((req, res) => send(req, res, { brokers: [BROKER_ID] })),
    READ,
  );

  // --- produce ------------------------------------------------------------------------------
  /** A parsed produce body's records; json values are kept as the client's text, as on /streams. */
  const readProduce = (
    body: unknown,
    bytes: Buffer,
    format: RecordFormat,
    topic: TopicInfo,
    rawPartition: string | undefined,
  ): ProduceRecord[] => {
    const partition = rawPartition === undefined ? undefined : partitionOf(topic, rawPartition);
    const shape = toStoredShape(body, format, topic, partition);
    // Binary values are replaced by their base64 (records.ts): those are serialised.
    const sent = format === 'json' ? bytes : undefined;
    return parseProduce(shape, topic, settings, Date.now(), CONFLUENT_PRODUCE, sent);
  };
  const produce = async (
    req: HttpRequest,
    res: HttpResponse,
    name: string,
    rawPartition: string | undefined,
  ): Promise<void> => {
    const format = produceFormat(req.headers['content-type']);
    const type = answerType(req.headers.accept);
    const { partitions, offsets } = await traced(
      deps.tracing,
      req,
      'streams.produce',
      { 'streams.topic': name },
      async (span) => {
        checkContentType(req.headers['content-type'], KAFKA_BODY_TYPES);
        const bytes = await req.body();
        const now = Date.now();
        // The json format's plain body in one pass, as on /streams (produce-scan.ts); a body with
        // a path partition, schema fields, keys that are not strings, reserved headers or
        // anything else the reader declines, the usual way in the usual order: the body's JSON,
        // the topic, the partition, the records.
        const scanned =
          format === 'json' && rawPartition === undefined
            ? scanProduce(bytes, settings, now, 'any')
            : undefined;
        const fast = scanned && !hasReservedHeader(scanned.records) ? scanned : undefined;
        const body = fast ? undefined : parseJsonBody(bytes);
        const topic = topicOf(name);
        const parsed =
          fast && fast.maxPartition < topic.partitions
            ? fast.records
            : readProduce(fast ? parseJsonBody(bytes) : body, bytes, format, topic, rawPartition);
        const queued = appendRecords(log, deps.partitioner, topic, parsed);
        const stored = { partitions: queued.partitions, offsets: await queued.offsets };
        span?.setAttributes(produceAttributes(parsed, stored.partitions));
        return stored;
      },
    );
    // One batch is stored all or nothing, so no record carries an error of its own.
    let text = '{"offsets":[';
    for (let i = 0; i < offsets.length; i++) {
      text += `${i > 0 ? ',' : ''}{"partition":${partitions[i]},"offset":${offsets[i]},"error_code":null,"error":null}`;
    }
    res.header('content-type', type).send(text + '],"key_schema_id":null,"value_schema_id":null}');
  };
  router.post(
    '/topics/:topic',
    handler((req, res) => produce(req, res, req.params.topic ?? '', undefined)),
    WRITE,
  );
  router.post(
    '/topics/:topic/partitions/:partition',
    handler((req, res) => produce(req, res, req.params.topic ?? '', req.params.partition ?? '')),
    WRITE,
  );

  // --- consumer instances -------------------------------------------------------------------
  router.post(
    '/consumers/:group',
    handler(async (req, res) => {
      // A `null` body is no settings (ConsumersResource.createGroup takes its PROTOTYPE).
      const body = (await optionalJson(req, KAFKA_BODY_TYPES)) ?? undefined;
      const type = answerType(req.headers.accept);
      const creation = parseConsumerConfig(body, settings.fetchTimeoutMaxMs, CONFLUENT_CONSUMERS);
      const created = await createInstance(deps, req, req.params.group ?? '', creation, '');
      res.header('content-type', type).json(created);
    }),
    READ,
  );
  router.post(
    `${INSTANCE}/assignments`,
    handler(async (req, res) => {
      const instance = await instanceOf(req);
      groups.assign(instance, parsePartitions(await req.json(KAFKA_BODY_TYPES), true)!);
      await groups.flush();
      res.send(undefined, 204);
    }),
    READ,
  );
  router.get(
    `${INSTANCE}/assignments`,
    handler(async (req, res) => {
      const partitions = (await instanceOf(req)).assigned.map((a) => ({
        topic: a.topic.name,
        partition: a.partition,
      }));
      send(req, res, { partitions });
    }),
    READ,
  );

  // --- one instance: delete, subscription, records, offsets and positions ------------------
  registerInstanceRoutes(
    router,
    deps,
    {
      instancePath: INSTANCE,
      bodyTypes: KAFKA_BODY_TYPES,
      send,
      subscribed: 204,
      subscription: subscribedTopics,
      recordsType: (req, instance) => recordsType(req.headers.accept, instance.config.format ?? 'json'),
      renderRecords: (records, instance) =>
        renderRecords(inFormat(records, instance.config.format ?? 'json')),
      // kafka-rest answers a commit with its CommitOffsetsResponse, a JSON list it leaves empty
      // (resources/v2/ConsumersResource.java commitOffsets, v2/KafkaConsumerState.commitOffsets),
      // and leaves partitions without a commit out of GET …/offsets (KafkaConsumerState.committed).
      answerCommit: (req, res) => send(req, res, []),
      uncommitted: 'omit',
      errorType: KAFKA_V2,
    },
    READ,
  );

  return {
    produceTo: (topic) => handler((req, res) => produce(req, res, topic, undefined)),
  };
}
