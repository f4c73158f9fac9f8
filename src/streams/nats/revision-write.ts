// Compare-and-set writes of one key of a JetStream key-value bucket that hold on a cluster.
//
// A KV update at a revision is a publish with `Nats-Expected-Last-Subject-Sequence`. On a
// clustered stream, nats-server 2.9 (reported up to 2.9.20) checks that expectation only on the
// leader before it proposes the write, against what it has applied so far
// (https://github.com/nats-io/nats-server/issues/4320): two writes at the same revision that
// arrive close together both pass and both are stored, the later one over the earlier. Against a
// 3-server nats-server 2.9.10 cluster, three clients (one per server) updating one key at the
// same revision at once saw more than one update acknowledged in 138 of 300 rounds
// (test/streams/revision-write.test.ts reports this count).
//
// The leader does track message ids that are proposed but not yet applied, for its duplicate
// window. So each write also carries the id `<key>@<revision it follows>`: of all writes that
// follow one revision of a key, the first one proposed is stored and every other is answered as
// a duplicate (or refused by the expectation) — exactly one stored in each of 300 rounds of the
// same test. Revisions are stream sequences, unique in the bucket, so the id names one step of
// one key; it is only reused when a whole-cluster crash lost acknowledged writes
// (docs/streams.md), and then a write is refused as a duplicate at worst, which the caller
// treats as a lost race.

import type { JetStreamClient } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { isWrongLastSequence, jetStreamErrorCode, JetStreamErrors } from './api-codes.js';

/** The KV header that marks a delete (the client's `kvOperationHdr`). */
const KV_OPERATION = 'KV-Operation';

export interface RevisionWriter {
  /**
   * Stores `value` (null: a delete marker) as the key's next revision after `previous` (> 0).
   * Resolves with the new revision, or undefined when another write after `previous` came first
   * (the caller's copy is behind). Rejects when JetStream did not answer (outcome unknown).
   */
  write(key: string, value: string | null, previous: number): Promise<number | undefined>;
  /**
   * Stores the first value of a key that has none (never written, or deleted): resolves with its
   * revision, or undefined when the key has a value (another writer's create came first).
   */
  create(key: string, value: string): Promise<number | undefined>;
}

/** `kv` is the bucket `bucket` opened on the same connection as `js`. */
export function revisionWriter(js: JetStreamClient, kv: KV, bucket: string): RevisionWriter {
  /** `previous` 0: the key must have no message at all (the id `<key>@0` guards creates alike). */
  const publish = async (
    key: string,
    value: string | null,
    previous: number,
  ): Promise<number | undefined> => {
    let hdrs;
    if (value === null) {
      hdrs = natsHeaders();
      hdrs.set(KV_OPERATION, 'DEL');
    }
    try {
      const ack = await js.publish(`$KV.${bucket}.${key}`, value ?? new Uint8Array(0), {
        msgID: `${key}@${previous}`,
        expect: { lastSubjectSequence: previous },
        ...(hdrs ? { headers: hdrs } : {}),
      });
      return ack.duplicate ? undefined : ack.seq;
    } catch (error) {
      // Another write after `previous` is stored, or still being proposed under the same id.
      if (isWrongLastSequence(error) || jetStreamErrorCode(error) === JetStreamErrors.duplicateInProcess)
        return undefined;
      throw error;
    }
  };
  return {
    write(key, value, previous) {
      if (!(previous > 0)) throw new Error(`a revision-checked write needs a revision (got ${previous})`);
      return publish(key, value, previous);
    },
    async create(key, value) {
      const first = await publish(key, value, 0);
      if (first !== undefined) return first;
      // A deleted key keeps its delete marker: the create then follows the marker's revision (as
      // the KV client's own create does). The read may come from a replica that is behind; a
      // value it shows that is gone already makes this create lose, and the caller goes again.
      const entry = await kv.get(key);
      if (entry && entry.operation !== 'PUT') return publish(key, value, entry.revision);
      return undefined;
    },
  };
}
