// One topic partition on JetStream: a stream of its own, where each message is ONE append's
// records for the partition (codec.ts's batch) with headers naming the offset of its first record
// and the record count. A batch is therefore stored whole or not at all (nats-server 2.9 has no
// multi-message atomic publish), and offsets are contiguous because every publish states the
// stream sequence it expects to follow (`Nats-Expected-Last-Sequence`): when another node appended
// in between, JetStream refuses the publish and the writer reloads the tail and tries again with
// the next base offset. On a cluster this stream-wide expectation holds (three writers, one per
// server, publishing at one expected sequence at once: exactly one stored, every round of
// test/streams/partition-slot.test.ts), unlike the per-subject one KV updates use
// (../nats/revision-write.ts). An append is answered with the base its message was published with,
// taken before the publish: news of other nodes' appends (`observed`) moves the writer's view of
// the tail while the publish is in flight. A retried publish keeps its `Nats-Msg-Id`, and
// JetStream's de-duplication runs before the expectation check, so a publish whose answer was lost
// is stored at most once and its retry learns where it landed.
//
// Appends waiting for one partition leave in one message (group commit): while a publish is in
// flight, later appends queue and the next publish carries all of them, up to the server's
// max_payload. Reads find the message that holds an offset (a hint from the previous read, or a
// binary search over sequences) and read forward by sequence.

import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { CodedError } from '../../core/errors.js';
import { isPermanentRefusal, isWrongLastSequence } from '../nats/api-codes.js';
import { ErrorCodes, StreamsError } from '../errors.js';
import { decodeRecord, mergeBatches, visitBatch } from './codec.js';
import type { BatchCache, CachedBatch } from './jetstream-cache.js';
import type { ReadLimits, StoredRecord } from './types.js';

export const BASE_HEADER = 'Sluice-Base';
export const COUNT_HEADER = 'Sluice-Count';
/** Messages of one partition in flight at once. */
const PIPELINE = 4;
/** Messages fetched together when reading forward. */
const READ_WINDOW = 8;
/** Remembered read positions (offset → sequence) per partition. */
const MAX_HINTS = 256;

export interface PartitionDeps {
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly cache: BatchCache;
  readonly timeoutMs: number;
  /** Queued appends are merged into one message up to this many bytes (at most max_payload). */
  readonly mergeBytes: number;
  readonly nextMsgId: () => string;
  /** This node stored records up to `end` (exclusive) in message `seq`. */
  readonly appended: (end: number, seq: number) => void;
}

interface Pending {
  readonly batch: Buffer;
  readonly count: number;
  readonly deadline: number;
  readonly resolve: (base: number) => void;
  readonly reject: (error: unknown) => void;
}

interface Message {
  readonly take: Pending[];
  readonly count: number;
  readonly data: Buffer;
  readonly deadline: number;
  readonly msgID: string;
}

interface Located extends CachedBatch {
  readonly seq: number;
}

/** A read below the partition's beginning (retention removed it); jetstream.ts names the topic. */
export class BelowBeginning extends CodedError {
  constructor(readonly beginning: number) {
    super('below_beginning', `offset below the beginning ${beginning}`);
  }
}

/** The stream's state as JetStream reports it. */
export interface StreamState {
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly messages: number;
  readonly bytes: number;
}

export function unavailable(error: unknown): StreamsError {
  if (error instanceof StreamsError) return error;
  return new StreamsError(
    503,
    ErrorCodes.storageRetriable,
    `the log is unavailable (NATS JetStream: ${(error as Error)?.message ?? String(error)}); retry`,
  );
}

export class PartitionLog {
  /** Highest end (one past the last offset) this node knows of. */
  end = 0;
  /** Highest stream sequence this node knows is stored. */
  private lastSeqSeen = 0;
  // The writer's view of the tail: valid while `known`.
  private known = false;
  private lastSeq = 0;
  private next = 0;
  private readonly queue: Pending[] = [];
  private busy = false;
  private readonly hints = new Map<number, number>();
  /** The first offset kept and its sequence, as last seen (retention moves them). */
  private beginning = 0;
  private firstSeq = 1;

  constructor(
    readonly partition: number,
    readonly stream: string,
    readonly subject: string,
    private readonly deps: PartitionDeps,
  ) {}

  /** Resolves with the offset of the batch's first record once JetStream acknowledged it. */
  append(batch: Buffer, count: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.queue.push({ batch, count, deadline: Date.now() + this.deps.timeoutMs, resolve, reject });
      if (!this.busy) void this.drain();
    });
  }

  /** Another node stored records up to `end` in message `seq`. */
  observed(end: number, seq: number): boolean {
    if (this.known && seq > this.lastSeq) {
      this.lastSeq = seq;
      this.next = end;
    }
    return this.advance(end, seq);
  }

  private advance(end: number, seq: number): boolean {
    if (seq > this.lastSeqSeen) this.lastSeqSeen = seq;
    if (end <= this.end) return false;
    this.end = end;
    return true;
  }

  private async drain(): Promise<void> {
    this.busy = true;
    try {
      while (this.queue.length > 0) {
        const messages: Message[] = [];
        while (this.queue.length > 0 && messages.length < PIPELINE) {
          const message = this.nextMessage();
          if (message) messages.push(message);
        }
        if (messages.length === 0) continue;
        const bases = await this.send(messages);
        messages.forEach((message, i) => {
          const base = bases[i]!;
          if (typeof base !== 'number') {
            for (const p of message.take) p.reject(unavailable(base.error));
            return;
          }
          let at = base;
          for (const p of message.take) {
            p.resolve(at);
            at += p.count;
          }
        });
      }
    } finally {
      this.busy = false;
    }
  }

  /** The queued appends that fit in one message (group commit); undefined when all had expired. */
  private nextMessage(): Message | undefined {
    const take: Pending[] = [];
    let bytes = 0;
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      if (take.length > 0 && bytes + head.batch.length > this.deps.mergeBytes) break;
      this.queue.shift();
      if (Date.now() >= head.deadline) {
        // Never sent: failing it leaves nothing behind.
        head.reject(unavailable(new Error('timed out waiting for earlier appends to the partition')));
        continue;
      }
      take.push(head);
      bytes += head.batch.length;
    }
    if (take.length === 0) return undefined;
    return {
      take,
      count: take.reduce((n, p) => n + p.count, 0),
      data: mergeBatches(take.map((p) => p.batch)),
      deadline: Math.min(...take.map((p) => p.deadline)),
      msgID: this.deps.nextMsgId(),
    };
  }

  /**
   * Publishes the messages in order, all in flight at once when the tail is known: each expects
   * the sequence the one before it will get and, to be sure that it is that one (and not another
   * node's message that took its place), that one's message id. What did not go through that
   * way — a refusal, a lost answer — is published again one by one with the same message ids.
   */
  private async send(messages: readonly Message[]): Promise<Array<number | { error: unknown }>> {
    const out: Array<number | { error: unknown }> = [];
    let rest = messages;
    if (this.known && messages.length > 1) {
      let seq = this.lastSeq;
      let next = this.next;
      let previous: string | undefined;
      const flights = messages.map((m) => {
        const base = next;
        const headers = natsHeaders();
        headers.set(BASE_HEADER, String(base));
        headers.set(COUNT_HEADER, String(m.count));
        const ack = this.deps.js.publish(this.subject, m.data, {
          msgID: m.msgID,
          headers,
          expect: {
            lastSequence: seq,
            streamName: this.stream,
            ...(previous !== undefined ? { lastMsgID: previous } : {}),
          },
          timeout: Math.max(1, m.deadline - Date.now()),
        });
        seq += 1;
        next += m.count;
        previous = m.msgID;
        return { base, ack };
      });
      const acks = await Promise.allSettled(flights.map((f) => f.ack));
      let i = 0;
      for (; i < acks.length; i++) {
        const result = acks[i]!;
        if (result.status !== 'fulfilled' || result.value.duplicate) break;
        const { base } = flights[i]!;
        this.stored(result.value.seq, base, messages[i]!.count, messages[i]!.data);
        out.push(base);
      }
      if (i < acks.length) this.known = false;
      rest = messages.slice(i);
    }
    for (const m of rest) {
      try {
        out.push(await this.publish(m.data, m.count, m.deadline, m.msgID));
      } catch (error) {
        out.push({ error });
      }
    }
    return out;
  }

  /** One message, retried until it is stored or the deadline passes. */
  private async publish(data: Buffer, count: number, deadline: number, msgID: string): Promise<number> {
    let lastError: unknown = new Error('no attempt made');
    for (let attempt = 0; ; attempt++) {
      const left = deadline - Date.now();
      if (left <= 0) throw unavailable(lastError);
      try {
        if (!this.known) await this.loadTail();
        // Taken now: news of other nodes' appends (`observed`) moves the tail while the publish is
        // in flight, and this message is stored at this base or not at all.
        const base = this.next;
        const headers = natsHeaders();
        headers.set(BASE_HEADER, String(base));
        headers.set(COUNT_HEADER, String(count));
        const ack = await this.deps.js.publish(this.subject, data, {
          msgID,
          headers,
          expect: { lastSequence: this.lastSeq, streamName: this.stream },
          timeout: left,
        });
        if (ack.duplicate) {
          // An earlier attempt of this publish was stored (its answer was lost); find where.
          this.known = false;
          const stored = await this.batchAt(ack.seq);
          if (!stored) throw new Error(`message ${ack.seq} of ${this.stream} acknowledged but not found`);
          const end = stored.base + stored.count;
          if (this.advance(end, ack.seq)) this.deps.appended(end, ack.seq);
          return stored.base;
        }
        this.stored(ack.seq, base, count, data);
        return base;
      } catch (error) {
        lastError = error;
        this.known = false;
        // Another writer appended first: reload the tail and go again at once.
        if (isWrongLastSequence(error)) continue;
        if (isPermanentRefusal(error)) {
          // A refusal that a retry will not change (e.g. the stream is gone).
          throw error;
        }
        // Unknown outcome (time-out, no responders, lost connection): retry with the same
        // message id after a pause, so a stored first attempt is found instead of repeated.
        await sleep(Math.min(deadline - Date.now(), 25 * 2 ** Math.min(attempt, 5)));
      }
    }
  }

  /**
   * This node's message `seq` holds the batch at `base`. The writer's tail only moves forward:
   * news of a later message by another node may have arrived before this answer.
   */
  private stored(seq: number, base: number, count: number, data: Uint8Array): void {
    const end = base + count;
    if (seq > this.lastSeq) {
      this.lastSeq = seq;
      this.next = end;
    }
    this.deps.cache.put(this.stream, seq, { base, count, data });
    if (this.advance(end, seq)) this.deps.appended(end, seq);
  }

  private async loadTail(): Promise<void> {
    const last = await this.lastBatch();
    this.lastSeq = last?.seq ?? 0;
    this.next = last ? last.base + last.count : 0;
    this.known = true;
    if (last) this.advance(this.next, last.seq);
  }

  async endOffset(): Promise<number> {
    const last = await this.lastBatch();
    if (!last) return 0;
    const end = last.base + last.count;
    this.advance(end, last.seq);
    this.hint(end, last.seq + 1);
    return end;
  }

  async streamState(): Promise<StreamState> {
    const { state } = await this.deps.jsm.streams.info(this.stream);
    return {
      firstSeq: state.first_seq,
      lastSeq: state.last_seq,
      messages: state.messages,
      bytes: state.bytes,
    };
  }

  /** The first offset kept: the first message's base (0 while nothing was written). */
  async beginningOffset(): Promise<number> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const state = await this.streamState();
      if (state.messages === 0) return this.beginning;
      // Removed meanwhile by another node's retention pass: look again.
      const first = await this.batchAt(state.firstSeq);
      if (first) return this.moveBeginning(first.base, state.firstSeq);
    }
    throw new Error(`the first message of ${this.stream} keeps moving`);
  }

  /** Retention removed the messages before `seq`, whose batch starts at `base`. */
  moveBeginning(base: number, seq: number): number {
    if (base > this.beginning) {
      this.beginning = base;
      this.firstSeq = seq;
      for (const [offset, hinted] of this.hints) if (hinted < seq) this.hints.delete(offset);
    }
    return this.beginning;
  }

  /** The batch stored in message `seq` (null when there is none, e.g. removed). */
  message(seq: number): Promise<Located | null> {
    return this.batchAt(seq);
  }

  async read(offset: number, limits: ReadLimits): Promise<StoredRecord[]> {
    if (offset < this.beginning) throw new BelowBeginning(this.beginning);
    if (limits.maxRecords <= 0) return [];
    const start = await this.locate(offset);
    if (start === undefined) return [];
    let seq = start;
    const out: StoredRecord[] = [];
    let bytes = 0;
    let full = false;
    let expected: number | undefined;
    let nextOffset = offset;
    let nextSeq = seq;
    for (;;) {
      const window = Math.max(1, Math.min(READ_WINDOW, this.lastSeqSeen - seq + 1));
      const batches = await Promise.all(Array.from({ length: window }, (_, i) => this.batchAt(seq + i)));
      let ended = false;
      for (const batch of batches) {
        if (!batch) {
          // Nothing read yet and the message is gone: retention removed it since it was located.
          if (expected === undefined && offset < (await this.beginningOffset()))
            throw new BelowBeginning(this.beginning);
          ended = true;
          break;
        }
        if (expected !== undefined && batch.base !== expected) {
          throw new Error(
            `${this.stream} is not contiguous at sequence ${batch.seq}: offset ${batch.base}, expected ${expected}`,
          );
        }
        expected = batch.base + batch.count;
        const first = Math.max(0, offset - batch.base);
        let lastIndex = first - 1;
        visitBatch(batch.data, first, (index, record) => {
          if (bytes + record.length > limits.maxBytes && (out.length > 0 || !limits.atLeastOne)) {
            full = true;
            return false;
          }
          out.push({
            partition: this.partition,
            offset: batch.base + index,
            size: record.length,
            ...decodeRecord(record),
          });
          bytes += record.length;
          lastIndex = index;
          if (out.length >= limits.maxRecords) full = true;
          return !full;
        });
        nextOffset = Math.max(nextOffset, batch.base + lastIndex + 1);
        nextSeq = nextOffset >= expected ? batch.seq + 1 : batch.seq;
        seq = batch.seq + 1;
        if (full) break;
      }
      if (full || ended) break;
    }
    this.hint(nextOffset, nextSeq);
    return out;
  }

  /** Sequence of the message holding `offset` (or the next one to be written at the end). */
  private async locate(offset: number): Promise<number | undefined> {
    const hinted = this.hints.get(offset);
    if (hinted !== undefined) return hinted;
    const last = await this.lastBatch();
    if (!last) {
      this.hint(0, 1);
      return offset === 0 ? 1 : undefined;
    }
    const end = last.base + last.count;
    this.advance(end, last.seq);
    if (offset >= end) {
      this.hint(end, last.seq + 1);
      return offset === end ? last.seq + 1 : undefined;
    }
    if (offset >= last.base) return last.seq;
    for (let attempt = 0; ; attempt++) {
      // The last message whose first offset is at or below `offset`, from the first one kept.
      let lo = this.firstSeq;
      let hi = last.seq - 1;
      let missing = false;
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        const batch = await this.batchAt(mid);
        if (!batch) {
          missing = true;
          break;
        }
        if (batch.base <= offset) lo = mid;
        else hi = mid - 1;
      }
      if (!missing) {
        if (lo !== this.firstSeq) return lo;
        const first = await this.batchAt(lo);
        if (first && first.base <= offset) return lo;
      }
      // Retention removed messages at the front: find the new first one.
      if (attempt >= 2) throw new Error(`message ${lo} of ${this.stream} is missing`);
      if (offset < (await this.beginningOffset())) throw new BelowBeginning(this.beginning);
    }
  }

  private hint(offset: number, seq: number): void {
    this.hints.delete(offset);
    this.hints.set(offset, seq);
    if (this.hints.size > MAX_HINTS) this.hints.delete(this.hints.keys().next().value!);
  }

  private async batchAt(seq: number): Promise<Located | null> {
    const cached = this.deps.cache.get(this.stream, seq);
    if (cached) return { ...cached, seq };
    const msg = await this.deps.jsm.streams.getMessage(this.stream, { seq });
    if (!msg) return null;
    return this.remember(msg.seq, msg.header.get(BASE_HEADER), msg.header.get(COUNT_HEADER), msg.data);
  }

  private async lastBatch(): Promise<Located | null> {
    const msg = await this.deps.jsm.streams.getMessage(this.stream, { last_by_subj: this.subject });
    if (!msg) return null;
    return this.remember(msg.seq, msg.header.get(BASE_HEADER), msg.header.get(COUNT_HEADER), msg.data);
  }

  private remember(seq: number, base: string, count: string, data: Uint8Array): Located {
    if (!/^\d+$/.test(base) || !/^\d+$/.test(count)) {
      // Something other than Sluice published to the partition's subject.
      throw new Error(`message ${seq} of ${this.stream} is not a Sluice batch (no ${BASE_HEADER} header)`);
    }
    const batch = { base: Number(base), count: Number(count), data };
    this.deps.cache.put(this.stream, seq, batch);
    return { ...batch, seq };
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
