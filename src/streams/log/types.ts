// The topic log contract. The HTTP layer and the consumer groups depend on this interface only;
// the LMDB implementation (lmdb.ts) and the NATS JetStream one (jetstream.ts) live beside it.
// Topic metadata is answered synchronously from a local cache (a networked implementation keeps
// it current); everything that reads the log itself is asynchronous, since on a network backend
// it is a round trip. An implementation that has the answer locally resolves immediately.

/** Per-topic settings, named after Kafka's topic configs; -1 means unlimited (as in Kafka). */
export interface TopicConfigs {
  /** `retention.ms`: records older than this are removed (-1: kept however old). */
  readonly retentionMs: number;
  /** `retention.bytes`: each partition is cut back to about this many bytes (-1: no bound). */
  readonly retentionBytes: number;
}

/** Keeps everything: the configs of a topic created without any. */
export const KEEP_EVERYTHING: TopicConfigs = Object.freeze({ retentionMs: -1, retentionBytes: -1 });

export interface TopicInfo {
  readonly name: string;
  /** Compact number used in storage keys, stable for the topic's life (a new topic of the same name gets a new one). */
  readonly id: number;
  readonly partitions: number;
  readonly createdAt: number;
  readonly configs: TopicConfigs;
}

/** What one retention pass removed from one partition. */
export interface RetentionRemoval {
  readonly topic: string;
  readonly partition: number;
  readonly records: number;
  /** Stored bytes removed (the backend's own measure: LMDB values, JetStream stream bytes). */
  readonly bytes: number;
  /** The partition's beginning offset after the pass. */
  readonly beginning: number;
}

export interface RecordHeader {
  readonly key: string;
  readonly value: string | null;
}

/** A record to store; its partition is given beside it (TopicLog.append's `partitions`). */
export interface RecordToStore {
  readonly key: string | null;
  /**
   * The value as JSON text (a string, or its UTF-8 bytes as the client sent them): consumers
   * get it spliced back without a parse/stringify round trip.
   */
  readonly valueJson: string | Buffer;
  readonly timestamp: number;
  readonly headers: readonly RecordHeader[] | null;
}

/** A record to store with its partition. */
export interface AppendRecord extends RecordToStore {
  readonly partition: number;
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

/**
 * TopicLog.append, in its two forms: each record to its own `partition`, or record i to
 * `partitions[i]`. One type, so that the log and its decorators declare the forms once (each
 * implements it with one function taking `partitions` as optional).
 */
export interface AppendFn {
  (topic: TopicInfo, records: readonly AppendRecord[]): Promise<number[]>;
  (topic: TopicInfo, records: readonly RecordToStore[], partitions: readonly number[]): Promise<number[]>;
}

export interface TopicLog {
  /** Throws StreamsError 40002 when the topic exists. Resolves once the topic is durable. */
  createTopic(name: string, partitions: number, configs?: TopicConfigs): Promise<TopicInfo>;
  /** Replaces the topic's configs (404 / 40401 when it does not exist); resolves with the topic as now stored. */
  updateTopic(name: string, configs: TopicConfigs): Promise<TopicInfo>;
  /**
   * Removes the topic and every record of it (404 / 40401 when it does not exist). A topic
   * created later under the same name is a new topic: new id, offsets from 0.
   */
  deleteTopic(name: string): Promise<void>;
  /**
   * One retention pass over every topic: removes, per partition, the oldest records that are
   * past the topic's retention.ms at `now` or beyond its retention.bytes, in whole batches from
   * the beginning, and reports what it removed. A backend whose engine removes old records by
   * itself (JetStream's max_age / max_bytes) reports what the engine removed since the last pass.
   */
  enforceRetention(now: number): Promise<RetentionRemoval[]>;
  /** From the local topic cache (kept current by the implementation). */
  topic(name: string): TopicInfo | undefined;
  topics(): readonly TopicInfo[];
  /**
   * Stores the records and resolves with their offsets (request order) once they are durable.
   * Offsets are taken synchronously, so concurrent calls get contiguous, unique offsets. The
   * records are encoded before it returns and not held while they are stored, so callers may
   * pass objects that die young. With `partitions`, record i goes to `partitions[i]` (the
   * produce routes pass their parsed records as they are, without a copy per record to add the
   * partition); without it, to its own `partition`.
   */
  readonly append: AppendFn;
  /**
   * Durable records from `offset` (inclusive) up to the end, bounded by the limits. An offset
   * below the partition's beginning (removed by retention) throws StreamsError 416 / 41601.
   */
  read(topic: TopicInfo, partition: number, offset: number, limits: ReadLimits): Promise<StoredRecord[]>;
  /** First stored offset: 0 until retention removed records, then the first one kept. */
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
