// The topic log contract. The HTTP layer and the consumer groups depend on this interface only;
// the LMDB implementation (lmdb.ts) and the NATS JetStream one (jetstream.ts) live beside it.
// Topic metadata is answered synchronously from a local cache (a networked implementation keeps
// it current); everything that reads the log itself is asynchronous, since on a network backend
// it is a round trip. An implementation that has the answer locally resolves immediately.

export interface TopicInfo {
  readonly name: string;
  /** Compact number used in storage keys, stable for the topic's life. */
  readonly id: number;
  readonly partitions: number;
  readonly createdAt: number;
}

export interface RecordHeader {
  readonly key: string;
  readonly value: string | null;
}

export interface AppendRecord {
  readonly partition: number;
  readonly key: string | null;
  /** The value as JSON text: consumers get it spliced back without a parse/stringify round trip. */
  readonly valueJson: string;
  readonly timestamp: number;
  readonly headers: readonly RecordHeader[] | null;
}

export interface StoredRecord {
  readonly partition: number;
  readonly offset: number;
  readonly key: string | null;
  /** The value's JSON text as UTF-8 bytes (a view into the stored batch). */
  readonly value: Buffer;
  readonly timestamp: number;
  readonly headers: readonly RecordHeader[] | null;
  /** Encoded size in the log, used for fetch byte budgets. */
  readonly size: number;
}

export interface ReadLimits {
  readonly maxRecords: number;
  readonly maxBytes: number;
  /** Return the first record even when it alone exceeds maxBytes, so a consumer always progresses. */
  readonly atLeastOne: boolean;
}

export type AppendListener = (topic: TopicInfo, partition: number, end: number) => void;

export interface TopicLog {
  /** Throws StreamsError 40002 when the topic exists. Resolves once the topic is durable. */
  createTopic(name: string, partitions: number): Promise<TopicInfo>;
  /** From the local topic cache (kept current by the implementation). */
  topic(name: string): TopicInfo | undefined;
  topics(): readonly TopicInfo[];
  /**
   * Stores the records and resolves with their offsets (request order) once they are durable.
   * Offsets are taken synchronously, so concurrent calls get contiguous, unique offsets.
   */
  append(topic: TopicInfo, records: readonly AppendRecord[]): Promise<number[]>;
  /** Durable records from `offset` (inclusive) up to the end, bounded by the limits. */
  read(topic: TopicInfo, partition: number, offset: number, limits: ReadLimits): Promise<StoredRecord[]>;
  /** First stored offset (0 while the log has no retention). */
  beginningOffset(topic: TopicInfo, partition: number): Promise<number>;
  /** One past the last durable offset: what a consumer can read up to. */
  endOffset(topic: TopicInfo, partition: number): Promise<number>;
  /**
   * Called after records become durable (and readable), including records appended through
   * another node of a shared backend, so long polls and push streams wake for them too.
   */
  onAppend(listener: AppendListener): () => void;
  /** Resolves when the log's storage answers now; rejects with the reason (GET /readyz). */
  probe(): Promise<void>;
  close(): Promise<void>;
}
