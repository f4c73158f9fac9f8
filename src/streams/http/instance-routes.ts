// The routes of one consumer instance (delete, subscription, records, offsets and positions),
// registered once for each path family with that family's codec: /streams and Confluent's v2
// make the same calls on the group coordinator and differ only in the media types they read
// and write, a few statuses and how records are rendered. Creating an instance differs more
// (settings, defaults) and stays with each family.

import type { Handler, HttpRequest, HttpResponse, Router, RouteOptions } from '../../core/http/index.js';
import type { ConsumedRecord, ConsumerInstance } from '../groups/coordinator.js';
import { tracedFetch } from './consumers.js';
import { handler as streamsHandler } from './errors.js';
import { registerOffsetRoutes } from './offsets.js';
import type { StreamsDeps } from './routes.js';

export interface InstanceCodec {
  /** The instance path, e.g. `/consumers/:group/instances/:instance`. */
  readonly instancePath: string;
  /** Content types a request body may carry. */
  readonly bodyTypes: readonly string[];
  /** Answers with a JSON body in the family's media type (or refuses the Accept). */
  send(req: HttpRequest, res: HttpResponse, body: unknown): void;
  /** Status of a successful subscribe: 200 (the /streams spec) or 204 (Confluent). */
  readonly subscribed: 200 | 204;
  /** The topics a subscribe body names; `undefined` leaves the subscription as it is. */
  subscription(body: unknown): string[] | undefined;
  /** The media type of a fetch answer, decided (and refused) before waiting for records. */
  recordsType(req: HttpRequest, instance: ConsumerInstance): string;
  /** A fetch answer's body. */
  renderRecords(records: readonly ConsumedRecord[], instance: ConsumerInstance): Buffer;
  /** Answers a successful commit. */
  answerCommit(req: HttpRequest, res: HttpResponse): void;
  /** Partitions without a committed offset in `GET …/offsets`: listed with -1, or left out. */
  readonly uncommitted: 'list' | 'omit';
  /** The media type of error answers (errors.ts, handler); the core's application/json if absent. */
  readonly errorType?: string;
}

export function registerInstanceRoutes(
  router: Router,
  deps: StreamsDeps,
  codec: InstanceCodec,
  options: RouteOptions,
): void {
  const { groups } = deps;
  const handler = (fn: Parameters<typeof streamsHandler>[0]): Handler => streamsHandler(fn, codec.errorType);
  const path = codec.instancePath;
  const instanceOf = (req: HttpRequest): Promise<ConsumerInstance> =>
    groups.acquire(req.params.group ?? '', req.params.instance ?? '');

  /** A change to the instance, stored before the 204. */
  const change = (act: (instance: ConsumerInstance) => void) =>
    handler(async (req, res) => {
      act(await instanceOf(req));
      await groups.flush();
      res.send(undefined, 204);
    });

  router.delete(
    path,
    change((instance) => groups.delete(instance, true)),
    options,
  );

  router.post(
    `${path}/subscription`,
    handler(async (req, res) => {
      const instance = await instanceOf(req);
      const topics = codec.subscription(await req.json(codec.bodyTypes));
      if (topics !== undefined) {
        groups.subscribe(instance, topics);
        await groups.flush();
      }
      res.send(undefined, codec.subscribed);
    }),
    options,
  );
  router.get(
    `${path}/subscription`,
    handler(async (req, res) => codec.send(req, res, { topics: (await instanceOf(req)).topics })),
    options,
  );
  router.delete(
    `${path}/subscription`,
    change((instance) => groups.subscribe(instance, [])),
    options,
  );

  router.get(
    `${path}/records`,
    handler(async (req, res) => {
      const instance = await instanceOf(req);
      const type = codec.recordsType(req, instance);
      const records = await tracedFetch(deps, req, instance);
      if (records === undefined) return;
      res.header('content-type', type).send(codec.renderRecords(records, instance));
    }),
    options,
  );

  registerOffsetRoutes(router, {
    instancePath: path,
    bodyTypes: codec.bodyTypes,
    groups,
    instanceOf,
    sendOffsets: (req, res, offsets) => codec.send(req, res, { offsets }),
    answerCommit: (req, res) => codec.answerCommit(req, res),
    uncommitted: codec.uncommitted,
    options,
    errorType: codec.errorType,
  });
}
