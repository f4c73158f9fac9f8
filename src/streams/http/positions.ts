// The position routes (read, seek, seek to beginning or end) of a consumer instance, shared by the
// /streams paths and the Confluent v2 paths: the same calls on the group coordinator, with each
// path's accepted body types and its way of answering.

import type { HttpRequest, HttpResponse, Router, RouteOptions } from '../../core/http/index.js';
import type { ConsumerGroups, ConsumerInstance, OffsetEntry } from '../groups/coordinator.js';
import { handler } from './errors.js';
import { parseOffsets, parsePartitions } from './validate.js';

export interface PositionRoutes {
  /** The instance path, e.g. `/consumers/:group/instances/:instance`. */
  instancePath: string;
  bodyTypes: readonly string[];
  groups: ConsumerGroups;
  instanceOf: (req: HttpRequest) => ConsumerInstance;
  /** Answers `GET …/positions` with the instance's positions. */
  sendPositions: (req: HttpRequest, res: HttpResponse, offsets: OffsetEntry[]) => void;
  options: RouteOptions;
}

export function registerPositionRoutes(router: Router, p: PositionRoutes): void {
  const { groups, instanceOf, bodyTypes, options } = p;
  router.get(
    `${p.instancePath}/positions`,
    handler(async (req, res) => p.sendPositions(req, res, await groups.positionsOf(instanceOf(req)))),
    options,
  );
  const seekRoute = (suffix: string, seek: (instance: ConsumerInstance, body: unknown) => Promise<void>) =>
    router.post(
      `${p.instancePath}/positions${suffix}`,
      handler(async (req, res) => {
        const instance = instanceOf(req);
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
