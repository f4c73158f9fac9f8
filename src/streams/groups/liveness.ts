// Which nodes are alive, judged by their heartbeats in the group-state bucket. nats-server 2.9
// has no per-key TTL, so a heartbeat is a key each node rewrites every STREAMS_NODE_HEARTBEAT;
// a node is taken for dead when this node has seen no new revision of its heartbeat for
// STREAMS_NODE_TIMEOUT. Ages are measured on this node's own monotonic clock from the moment a
// revision was seen (never from the timestamp in the value), so clock skew between machines
// does not matter; a node never heard of counts from the moment this one started watching.

export class NodeLiveness {
  private readonly seen = new Map<string, { at: number; revision: number }>();
  private readonly startedAt: number;

  constructor(
    private readonly timeoutMs: number,
    private readonly now: () => number,
  ) {
    this.startedAt = now();
  }

  /** A heartbeat revision of `node` was seen. */
  observe(node: string, revision: number): void {
    const previous = this.seen.get(node);
    if (previous?.revision !== revision) this.seen.set(node, { at: this.now(), revision });
  }

  /** The node's heartbeat key was deleted. */
  forget(node: string): void {
    this.seen.delete(node);
  }

  /** The last heartbeat revision seen, 0 when none. */
  revision(node: string): number {
    return this.seen.get(node)?.revision ?? 0;
  }

  isDead(node: string): boolean {
    return this.now() - (this.seen.get(node)?.at ?? this.startedAt) > this.timeoutMs;
  }

  nodes(): string[] {
    return [...this.seen.keys()];
  }
}
