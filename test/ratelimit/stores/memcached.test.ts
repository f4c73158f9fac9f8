// The object cache store on real memcached processes: upstream key format and expiry, keys
// memcached cannot hold, the asynchronous increments (docs/ratelimit.md, memcached), SRV discovery and refresh,
// failure and recovery, TLS.

import { strict as assert } from 'node:assert';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { EnvReader } from '../../../src/core/settings/index.js';
import { ManualClock } from '../../../src/ratelimit/engine/clock.js';
import { RateLimitEngine } from '../../../src/ratelimit/engine/engine.js';
import { createStatsBuffer, SharedStatsTable } from '../../../src/ratelimit/stats/shared-table.js';
import {
  createConfiguredStores,
  storeErrorStat,
  type ConfiguredStores,
  type StoreContext,
} from '../../../src/ratelimit/store/factory.js';
import { crc32, invalidKeyReason } from '../../../src/ratelimit/store/memcached-client.js';
import { loadStoreSettings } from '../../../src/ratelimit/settings/store.js';
import { Code, RateLimitRequestError } from '../../../src/ratelimit/types.js';
import { memcachedAvailable, startMemcached, type MemcachedProcess } from '../../helpers/memcached.js';
import { makeCerts, type TestCerts } from '../../helpers/redis.js';
import { rulesFrom } from '../helpers.js';
import { waitUntil } from '../../helpers/wait.js';

const CONFIG = `
domain: mc
descriptors:
  - key: user
    rate_limit: { unit: minute, requests_per_unit: 3 }
  - key: month
    rate_limit: { unit: month, requests_per_unit: 3 }
`;

/** Sends one raw text-protocol line and returns the reply up to its terminator. */
function raw(port: number, line: string, until: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => socket.write(line));
    let text = '';
    socket.on('data', (c: Buffer) => {
      text += c.toString();
      if (until.test(text)) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.on('error', reject);
  });
}

async function harness(env: Record<string, string>, extra: Partial<StoreContext> = {}) {
  const stats = new SharedStatsTable(createStatsBuffer(256));
  const stores = (await createConfiguredStores(
    loadStoreSettings(new EnvReader({ BACKEND_TYPE: 'objcache', ...env })),
    { algorithm: 'fixed', stats, ...extra },
  ))!;
  const clock = new ManualClock(Date.now());
  const engine = new RateLimitEngine({
    store: stores.store,
    stats,
    clock,
    settings: {
      shadowMode: false,
      quotaMode: false,
      nearLimitRatio: 0.8,
      stopCacheKeyIncrementWhenOverlimit: false,
      cacheKeyPrefix: '',
      responseHeaders: { enabled: false, limit: 'a', remaining: 'b', reset: 'c' },
    },
  });
  engine.setRules(rulesFrom({ 'mc.yaml': CONFIG }));
  return { engine, clock, stores, stats };
}

const OBJCACHE_ERROR = storeErrorStat('objcache');
const settle = (s: ConfiguredStores): Promise<void> => s.objcache!.settled();

describe(
  'object cache store (memcached)',
  { skip: memcachedAvailable ? false : 'memcached is not installed' },
  () => {
    let mc: MemcachedProcess;
    before(async () => {
      mc = await startMemcached();
    });
    after(async () => {
      await mc?.stop();
    });

    it('stores the upstream key with the hit count and an expiry of the window plus jitter', async () => {
      const h = await harness({ OBJCACHE_HOST_PORT: `127.0.0.1:${mc.port}` });
      const nowS = Math.floor(h.clock.nowMs() / 1000);
      const key = `mc_user_alice_${nowS - (nowS % 60)}`;
      const sentAt = Date.now();
      await h.engine.shouldRateLimit({
        domain: 'mc',
        descriptors: [{ entries: [{ key: 'user', value: 'alice' }] }],
        hitsAddend: 2,
      });
      await settle(h.stores);
      const reply = await raw(mc.port, `mg ${key} v t\r\n`, /\r\n.*\r\n|EN\r\n/);
      const m = /^VA \d+ t(\d+)\r\n(\d+)\r\n/.exec(reply);
      if (!m) throw new Error(`unexpected meta get reply ${JSON.stringify(reply)}`);
      assert.equal(m[2], '2');
      const ttl = Number(m[1]);
      // The TTL falls as real time passes: it may be lower by the seconds waited since the set,
      // however many that were, and two more for memcached's one-second clock.
      const waited = Math.ceil((Date.now() - sentAt) / 1000) + 2;
      assert.ok(ttl > 60 - waited && ttl < 360, `ttl ${ttl} in (60 - ${waited}, 360)`);
      await h.stores.close();
    });

    it('a month window (over memcached’s 30-day relative limit) is sent as an absolute expiry, so the key lives', async () => {
      const h = await harness({
        OBJCACHE_HOST_PORT: `127.0.0.1:${mc.port}`,
        EXPIRATION_JITTER_MAX_SECONDS: '0',
      });
      for (let i = 0; i < 2; i++) {
        await h.engine.shouldRateLimit({
          domain: 'mc',
          descriptors: [{ entries: [{ key: 'month', value: 'm' }] }],
        });
        await settle(h.stores);
      }
      const r = await h.engine.shouldRateLimit({
        domain: 'mc',
        descriptors: [{ entries: [{ key: 'month', value: 'm' }] }],
      });
      assert.equal(r.statuses[0]!.limitRemaining, 0);
      await h.stores.close();
    });

    it('keys over 250 bytes or with whitespace/control characters fail with a clear error, and the store keeps serving', async () => {
      const h = await harness({ OBJCACHE_HOST_PORT: `127.0.0.1:${mc.port}` });
      for (const value of ['x'.repeat(260), 'has space', 'tab\there', 'nl\nhere', 'del\x7f']) {
        await assert.rejects(
          Promise.resolve(
            h.engine.shouldRateLimit({ domain: 'mc', descriptors: [{ entries: [{ key: 'user', value }] }] }),
          ),
          (error: unknown) =>
            error instanceof RateLimitRequestError &&
            error.kind === 'service_error' &&
            /object cache key .* is (longer than 250 bytes|contains whitespace or control characters)/.test(
              error.message,
            ),
        );
      }
      assert.equal(h.stats.get(OBJCACHE_ERROR), 0, 'a refused key is not a store error');
      const ok = await h.engine.shouldRateLimit({
        domain: 'mc',
        descriptors: [{ entries: [{ key: 'user', value: 'fine' }] }],
      });
      assert.equal(ok.overallCode, Code.OK);
      assert.equal(invalidKeyReason('a'.repeat(250)), undefined);
      assert.equal(invalidKeyReason('é'.repeat(126)), 'longer than 250 bytes');
      await h.stores.close();
    });

    it('simultaneous requests may overshoot (rule 12), but the count is exact once increments land', async () => {
      const h = await harness({ OBJCACHE_HOST_PORT: `127.0.0.1:${mc.port}` });
      const request = { domain: 'mc', descriptors: [{ entries: [{ key: 'user', value: 'burst' }] }] };
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => Promise.resolve(h.engine.shouldRateLimit(request))),
      );
      assert.ok(answers.filter((a) => a.overallCode === Code.OK).length >= 3);
      await settle(h.stores);
      const peek = await h.stores.store.peek(
        [{ key: 'mc_user_burst_', divider: 60, hits: 0 }],
        h.clock.nowMs(),
      );
      assert.deepEqual(peek, [10]);
      const next = await h.engine.shouldRateLimit(request);
      assert.equal(next.overallCode, Code.OVER_LIMIT);
      await h.stores.close();
    });

    it('OBJCACHE_SRV: servers come from the SRV record and follow it on refresh', async () => {
      const other = await startMemcached();
      let target = mc.port;
      const resolveSrv = async (name: string) => {
        assert.equal(name, '_memcache._tcp.example.test');
        return [{ name: '127.0.0.1', port: target, priority: 0, weight: 0 }];
      };
      try {
        const h = await harness(
          { OBJCACHE_SRV: '_memcache._tcp.example.test', OBJCACHE_SRV_REFRESH: '50ms' },
          { resolveSrv },
        );
        assert.deepEqual(h.stores.objcache!.client.addresses(), [{ host: '127.0.0.1', port: mc.port }]);
        target = other.port;
        await waitUntil(
          'the SRV refresh',
          () => h.stores.objcache!.client.addresses()[0]!.port === other.port,
        );
        await h.engine.shouldRateLimit({
          domain: 'mc',
          descriptors: [{ entries: [{ key: 'user', value: 'srv' }] }],
        });
        await settle(h.stores);
        const nowS = Math.floor(h.clock.nowMs() / 1000);
        const reply = await raw(other.port, `get mc_user_srv_${nowS - (nowS % 60)}\r\n`, /END\r\n/);
        assert.match(reply, /^VALUE \S+ 0 1\r\n1\r\n/);
        await h.stores.close();
      } finally {
        await other.stop();
      }
    });

    it('memcached down: fail-open answers and counts errors; restarted: served again', async () => {
      const h = await harness({ OBJCACHE_HOST_PORT: `127.0.0.1:${mc.port}`, KVSTORE_TIMEOUT: '5s' });
      const request = { domain: 'mc', descriptors: [{ entries: [{ key: 'user', value: 'down' }] }] };
      assert.equal((await h.engine.shouldRateLimit(request)).statuses[0]!.limitRemaining, 2);
      await settle(h.stores);
      await mc.kill();
      const during = await h.engine.shouldRateLimit(request);
      assert.equal(during.overallCode, Code.OK);
      assert.ok(h.stats.get(OBJCACHE_ERROR) >= 1);
      await mc.restart();
      await waitUntil('a decision without a store error', async () => {
        const before = h.stats.get(OBJCACHE_ERROR);
        await h.engine.shouldRateLimit(request);
        await settle(h.stores);
        return h.stats.get(OBJCACHE_ERROR) === before;
      });
      // The restarted memcached is empty; the count there is ours again.
      assert.equal((await h.engine.shouldRateLimit(request)).statuses[0]!.limitRemaining, 1);
      await h.stores.close();
    });

    it('spreads keys over several servers by crc32(key) mod n, like the Go client upstream uses', async () => {
      const second = await startMemcached();
      try {
        const h = await harness({ OBJCACHE_HOST_PORT: `127.0.0.1:${mc.port},127.0.0.1:${second.port}` });
        const nowS = Math.floor(h.clock.nowMs() / 1000);
        const ws = nowS - (nowS % 60);
        for (let i = 0; i < 8; i++)
          await h.engine.shouldRateLimit({
            domain: 'mc',
            descriptors: [{ entries: [{ key: 'user', value: `spread${i}` }] }],
          });
        await settle(h.stores);
        for (let i = 0; i < 8; i++) {
          const key = `mc_user_spread${i}_${ws}`;
          const port = [mc.port, second.port][crc32(key) % 2]!;
          assert.match(
            await raw(port, `get ${key}\r\n`, /END\r\n/),
            /^VALUE /,
            `${key} on the crc32-chosen server`,
          );
        }
        assert.equal(crc32('123456789'), 0xcbf43926);
        await h.stores.close();
      } finally {
        await second.stop();
      }
    });
  },
);

describe('object cache over TLS', { skip: memcachedAvailable ? false : 'memcached is not installed' }, () => {
  let certs: TestCerts;
  let mc: MemcachedProcess;
  before(async () => {
    certs = makeCerts();
    mc = await startMemcached({
      args: ['-Z', '-o', `ssl_chain_cert=${certs.serverCert},ssl_key=${certs.serverKey}`],
    });
  });
  after(async () => {
    await mc?.stop();
    certs?.cleanup();
  });

  it('counts over TLS with the CA; an untrusted server is refused', async () => {
    const h = await harness({
      OBJCACHE_HOST_PORT: `127.0.0.1:${mc.port}`,
      OBJCACHE_TLS: 'true',
      OBJCACHE_TLS_CACERT: certs.ca,
      KVSTORE_FAILURE_MODE: 'closed',
    });
    const request = { domain: 'mc', descriptors: [{ entries: [{ key: 'user', value: 'tls' }] }] };
    assert.equal((await h.engine.shouldRateLimit(request)).statuses[0]!.limitRemaining, 2);
    await settle(h.stores);
    assert.equal((await h.engine.shouldRateLimit(request)).statuses[0]!.limitRemaining, 1);
    await h.stores.close();
    const untrusted = await harness({
      OBJCACHE_HOST_PORT: `127.0.0.1:${mc.port}`,
      OBJCACHE_TLS: 'true',
      KVSTORE_FAILURE_MODE: 'closed',
      KVSTORE_TIMEOUT: '1s',
    });
    await assert.rejects(
      Promise.resolve(untrusted.engine.shouldRateLimit(request)),
      /objcache store unavailable/,
    );
    await untrusted.stores.close();
  });
});
