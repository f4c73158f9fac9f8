// The offset and position routes of a consumer instance (commit, read committed offsets, read
// positions, seek, seek to beginning or end), shared by the /streams paths and the Confluent v2
// paths: the same calls on the group coordinator, with each path's accepted body types and its
// way of answering.

import type { Handler, HttpRequest, HttpResponse, Router, RouteOptions } from '../../core/http/index.js';
import type { ConsumerGroups, ConsumerInstance, OffsetEntry } from '../groups/coordinator.js';
import { optionalJson } from './body.js';
import { handler as streamsHandler } from './errors.js';
import { parseOffsets, parsePartitions } from './validate.js';

export interface OffsetRoutes {
  /** The instance path, e.g. `/consumers/:group/instances/:instance`. */
  instancePath: string;
  bodyTypes: readonly string[];
  groups: ConsumerGroups;
  instanceOf: (req: HttpRequest) => Promise<ConsumerInstance>;
  /** Answers `GET …/offsets` and `GET …/positions` with `{offsets}`. */
  sendOffsets: (
    req: HttpRequest,
    res: HttpResponse,
    offsets: ReadonlyArray<OffsetEntry & { metadata?: string }>,
  ) => void;
  /** Answers a successful commit: 204 on /streams, Confluent's 200 with `[]`. */
  answerCommit: (req: HttpRequest, res: HttpResponse) => void;
  /** Partitions without a committed offset: listed with -1 (/streams) or left out (Confluent). */
  uncommitted: 'list' | 'omit';
  options: RouteOptions;
  /** The media type of error answers (errors.ts, handler). */
  errorType?: string | undefined;
}

export function registerOffsetRoutes(router: Router, p: OffsetRoutes): void {
  const { groups, instanceOf, bodyTypes, options } = p;
  const handler = (fn: Parameters<typeof streamsHandler>[0]): Handler => streamsHandler(fn, p.errorType);
  router.post(
    `${p.instancePath}/offsets`,
    handler(async (req, res) => {
      const instance = await instanceOf(req);
      const offsets = parseOffsets(await optionalJson(req, bodyTypes), false);
      // An empty body commits everything fetched so far (Confluent and Redpanda do the same).
      if (offsets === undefined) groups.commitPositions(instance);
      else await groups.commitOffsets(instance, offsets);
      await groups.flush();
      p.answerCommit(req, res);
    }),
    options,
  );
  router.get(
    `${p.instancePath}/offsets`,
    handler(async (req, res) => {
      const partitions = parsePartitions(await optionalJson(req, bodyTypes), false);
      const offsets = groups.committedOffsets(await instanceOf(req), partitions);
      const shown = p.uncommitted === 'omit' ? offsets.filter((o) => o.offset >= 0) : offsets;
      p.sendOffsets(
        req,
        res,
        shown.map((o) => ({ ...o, metadata: '' })),
      );
    }),
    options,
  );
  router.get(
    `${p.instancePath}/positions`,
    handler(async (req, res) => p.sendOffsets(req, res, await groups.positionsOf(await instanceOf(req)))),
    options,
  );
  const seekRoute = (suffix: string, seek: (instance: ConsumerInstance, body: unknown) => Promise<void>) =>
    router.post(
      `${p.instancePath}/positions${suffix}`,
      handler(async (req, res) => {
        const instance = await instanceOf(req);
        await seek(instance, await req.json(bodyTypes));
        await groups.flush();
        res.send(undefined, 204);
      }),
      options,
    );
  seekRoute('', (instance, body) => groups.seek(instance, parseOffsets(body, true)!));
  seekRoute('/beginning', (instance, body) => groups.seekToBeginning(instance, parsePartitions(body, true)!));
  seekRoute('/end', (instance, body) => groups.seekToEnd(instance, parsePartitions(body, true)!));
}
