// The follower of a JetStream key-value bucket: it applies every change once, in order, and a
// resync after the bucket lost its tail (its sequence numbers given to new writes) reports what
// the bucket holds, so an owner can drop what was lost. The lost tail is produced for real by
// recreating the bucket with fewer values, which is what a cluster that lost its last
// acknowledged writes looks like to a client.
import { after, before, describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Kvm, type KV } from '@nats-io/kv';
import { BucketFollower } from '../../src/streams/nats/bucket-follower.js';
import { natsAvailable, startNatsCluster, type NatsCluster } from '../helpers/nats.js';
import { waitUntil } from '../helpers/wait.js';

describe('BucketFollower', { skip: !natsAvailable && 'nats-server not installed' }, () => {
  let cluster: NatsCluster;
  let nc: NatsConnection;
  before(async () => {
    cluster = await startNatsCluster(1);
    nc = await connect({ servers: cluster.urls });
  });
  after(async () => {
    await nc?.close();
    await cluster?.stop();
  });

  const follow = (kv: KV) => {
    const copy = new Map<string, string>();
    const replays: Array<ReadonlySet<string>> = [];
    const follower = new BucketFollower(kv, {
      apply: (entry) => {
        if (entry.operation === 'PUT') copy.set(entry.key, entry.string());
        else copy.delete(entry.key);
      },
      replayed: (keys) => replays.push(keys),
      onError: () => undefined,
      probeMs: 50,
      stallMs: 5_000,
    });
    return { copy, replays, follower };
  };

  test('applies the values present at start and every change after it, in order', async (t) => {
    const kv = await new Kvm(nc).create('follow_order', { history: 1 });
    await kv.put('a', '1');
    await kv.put('b', '1');
    const { copy, follower } = follow(kv);
    const last = await follower.start();
    t.after(() => follower.stop());
    await waitUntil('the start values', () => follower.seen >= last);
    assert.deepEqual(Object.fromEntries(copy), { a: '1', b: '1' });
    await kv.put('a', '2');
    await kv.delete('b');
    const revision = await kv.put('c', '3');
    await waitUntil('the changes', () => follower.seen >= revision);
    assert.deepEqual(Object.fromEntries(copy), { a: '2', c: '3' });
  });

  test('a resync after the bucket lost its tail reports what the bucket holds and applies the reused revisions', async (t) => {
    const kvm = new Kvm(nc);
    let kv = await kvm.create('follow_lost', { history: 1 });
    await kv.put('kept', 'k');
    await kv.put('lost-1', 'x');
    await kv.put('lost-2', 'y');
    const { copy, replays, follower } = follow(kv);
    const last = await follower.start();
    t.after(() => follower.stop());
    await waitUntil('the start values', () => follower.seen >= last);
    const seenBefore = follower.seen;
    // The bucket comes back holding only its first write; the next write reuses a lost revision.
    await kv.destroy();
    kv = await kvm.create('follow_lost', { history: 1 });
    await kv.put('kept', 'k');
    const reused = await kv.put('new', 'n');
    assert.ok(reused <= seenBefore, `revision ${reused} is one the follower had already seen`);
    follower.resync();
    await waitUntil('the resync to finish', () => replays.length === 1);
    assert.deepEqual([...replays[0]!].sort(), ['kept', 'new']);
    assert.equal(copy.get('new'), 'n', 'the write with a reused revision was applied');
    const after = await kv.put('later', 'l');
    await waitUntil('a change after the resync', () => copy.get('later') === 'l');
    assert.ok(follower.seen >= after);
  });
});

// The race below cannot be produced on purpose with a real server: a watch being made at the
// moment the follower stops. A stand-in bucket holds the restart's watch until after stop().
describe('BucketFollower stopping while it watches again', () => {
  interface HeldWatch {
    stopped: boolean;
    stop(): void;
    end(): void;
    [Symbol.asyncIterator](): AsyncGenerator<never>;
  }
  const heldWatch = (): HeldWatch => {
    let finish!: () => void;
    const ended = new Promise<void>((resolve) => (finish = resolve));
    return {
      stopped: false,
      stop() {
        this.stopped = true;
        finish();
      },
      end: () => finish(),
      async *[Symbol.asyncIterator]() {
        await ended;
      },
    };
  };

  test('a watch made after stop() began is stopped too', async () => {
    const made: HeldWatch[] = [];
    let release: (() => void) | undefined;
    const kv = {
      status: () => Promise.resolve({ streamInfo: { state: { last_seq: 0 } } }),
      watch: () => {
        const watch = heldWatch();
        made.push(watch);
        if (made.length === 1) return Promise.resolve(watch);
        return new Promise<HeldWatch>((resolve) => (release = () => resolve(watch)));
      },
    } as unknown as KV;
    const follower = new BucketFollower(kv, {
      apply: () => undefined,
      onError: () => undefined,
      probeMs: 5,
      stallMs: 60_000,
    });
    await follower.start();
    made[0]!.end(); // the first watch ends: the follower makes a new one
    await waitUntil('the new watch to be asked for', () => release !== undefined);
    const stopping = follower.stop();
    release!();
    await stopping;
    assert.equal(made.length, 2);
    assert.equal(made[1]!.stopped, true, 'the watch made while stopping was stopped');
  });
});
