// Which member of a group reads which partition. Pure, so it can be tested alone and gives the
// same answer after a restart for the same members: per topic, the members subscribed to it in
// join order take its partitions round robin (each partition has exactly one owner).

export interface MemberSubscription {
  readonly id: string;
  /** Join order within the group; ties broken by id. */
  readonly seq: number;
  readonly topics: readonly string[];
}

export interface TopicPartitions {
  readonly name: string;
  readonly partitions: number;
}

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

export function assignPartitions(
  members: readonly MemberSubscription[],
  topicOf: (name: string) => TopicPartitions | undefined,
): Map<string, TopicPartition[]> {
  const ordered = [...members].sort((a, b) => a.seq - b.seq || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const result = new Map<string, TopicPartition[]>();
  for (const member of ordered) result.set(member.id, []);
  const topics = new Set<string>();
  for (const member of ordered) for (const t of member.topics) topics.add(t);
  for (const name of [...topics].sort()) {
    const topic = topicOf(name);
    if (!topic) continue;
    const readers = ordered.filter((m) => m.topics.includes(name));
    for (let p = 0; p < topic.partitions; p++) {
      const owner = readers[p % readers.length]!;
      result.get(owner.id)!.push({ topic: name, partition: p });
    }
  }
  return result;
}
