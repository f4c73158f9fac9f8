// Read-only views of consumer groups (extension, for the console and operators; docs/streams.md):
//   GET /streams/consumer-groups           groups with their member count, topics and total lag
//   GET /streams/consumer-groups/<group>   members, their assignments, and per partition the
//                                          committed offset, the end offset and the lag
// A stopped group (no members, committed offsets kept) is listed with 0 members until deleted
// (group-admin.ts resets and deletes it).
// Kafka's own tools show the same (kafka-consumer-groups --describe); Confluent's v3 API has
// consumer-groups and lags resources. Scope streams:read, like every read of the service.

import type { Router, RouteOptions } from '../../core/http/index.js';
import type { ConsumerGroups } from '../groups/coordinator.js';
import type { TopicLog } from '../log/types.js';
import { ErrorCodes } from '../errors.js';
import { groupNotFound } from '../groups/admin.js';
import { handler } from './errors.js';
import { checkName } from './validate.js';

export function registerGroupViews(
  router: Router,
  deps: { groups: ConsumerGroups; log: TopicLog },
  options: RouteOptions,
): void {
  const { groups, log } = deps;
  router.get(
    '/streams/consumer-groups',
    handler(async (_req, res) => {
      const list = [];
      for (const name of groups.groupNames().sort()) {
        const view = groups.describeGroup(name);
        const lags = (await partitionLags(view, log)).map((p) => p.lag);
        const committed = lags.filter((lag): lag is number => lag !== null);
        list.push({
          group: name,
          members: view.members.length,
          topics: view.topics,
          // The sum over the partitions the group has committed on; null before any commit.
          lag: committed.length === 0 ? null : committed.reduce((a, b) => a + b, 0),
        });
      }
      res.json({ consumer_groups: list });
    }),
    options,
  );
  router.get(
    '/streams/consumer-groups/:group',
    handler(async (req, res) => {
      const group = req.params.group ?? '';
      checkName('consumer group', group, ErrorCodes.invalidConsumerConfig);
      const view = groups.describeGroup(group);
      // Without members the topics are those of its committed offsets: none, an unknown group.
      if (view.members.length === 0 && view.topics.length === 0) throw groupNotFound(group);
      const partitions = await partitionLags(view, log);
      res.json({
        group,
        members: view.members.map(({ member, instance, partitions: owned }) => ({
          instance_id: member.id,
          node: member.node ?? null,
          subscription: [...member.topics],
          assignments: owned.map((p) => ({ topic: p.topic, partition: p.partition })),
          created_at: instance ? new Date(instance.createdAt).toISOString() : null,
          last_seen: instance ? new Date(instance.lastSeen).toISOString() : null,
        })),
        partitions,
      });
    }),
    options,
  );
}

type GroupView = ReturnType<ConsumerGroups['describeGroup']>;

/** Per partition of the group's topics: owner, committed offset, end offset and lag. */
async function partitionLags(view: GroupView, log: TopicLog) {
  const owners = new Map<string, string>();
  for (const { member, partitions } of view.members)
    for (const p of partitions) owners.set(`${p.topic}/${p.partition}`, member.id);
  const partitions = [];
  for (const name of view.topics) {
    const topic = log.topic(name);
    if (!topic) continue;
    for (let p = 0; p < topic.partitions; p++) {
      const end = await log.endOffset(topic, p);
      const committed = view.committed(name, p);
      partitions.push({
        topic: name,
        partition: p,
        owner: owners.get(`${name}/${p}`) ?? null,
        committed_offset: committed ?? null,
        end_offset: end,
        // Records produced but not yet consumed-and-committed by the group.
        lag: committed === undefined ? null : Math.max(0, end - committed),
      });
    }
  }
  return partitions;
}
