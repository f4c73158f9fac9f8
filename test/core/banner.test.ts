// The start banner's pieces: backend descriptions never carry a credential, a wildcard bind gets a
// loopback URL beside it, and the console URL follows the port that serves the console.
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { bannerLines, describeEndpoint, loopbackUrl } from '../../src/core/banner.js';

describe('start banner', () => {
  it('describes a backend URL without user, password or query', () => {
    assert.equal(
      describeEndpoint('postgres://app:s3cret@db.internal:5432/sluice?sslmode=require&password=x'),
      'postgres://db.internal:5432/sluice',
    );
    assert.equal(describeEndpoint('nats://user:pw@10.0.0.1:4222'), 'nats://10.0.0.1:4222');
    assert.doesNotMatch(describeEndpoint('not a url with s3cret'), /s3cret/);
  });

  it('adds a loopback URL to a wildcard bind only', () => {
    assert.equal(loopbackUrl('http://0.0.0.0:8080'), 'http://127.0.0.1:8080');
    assert.equal(loopbackUrl('http://[::]:8083/api/v1'), 'http://[::1]:8083/api/v1');
    assert.equal(loopbackUrl('0.0.0.0:8081'), '127.0.0.1:8081');
    assert.equal(loopbackUrl('http://10.1.2.3:8080'), undefined);
  });

  it('lists listeners, backends and the console of the automation port', () => {
    const lines = bannerLines({
      services: ['ratelimit', 'automation'],
      threads: 2,
      dataDir: '/var/lib/sluice',
      authHints: { ratelimit: 'none', automation: 'bearer' },
      ready: [0, 1].map((index) => ({
        type: 'ready' as const,
        index,
        transport: 'node',
        addresses: {
          ratelimit: { http: 'http://0.0.0.0:8080' },
          ...(index === 0 ? { automation: { http: 'http://0.0.0.0:8083/api/v1' } } : {}),
        },
        backends: {
          ratelimit: { counters: 'redis single 10.0.0.5:6379' },
          ...(index === 0 ? { automation: { database: 'PostgreSQL postgres://db:5432/sluice' } } : {}),
        },
      })),
    });
    const text = lines.join('\n');
    assert.match(text, /ratelimit {2}http {5}http:\/\/0\.0\.0\.0:8080 \(http:\/\/127\.0\.0\.1:8080\)\n/);
    assert.equal(text.match(/ratelimit {2}http/g)?.length, 1, 'a port shared by threads is listed once');
    assert.match(text, /ratelimit {2}counters redis single 10\.0\.0\.5:6379/);
    assert.match(text, /automation database PostgreSQL postgres:\/\/db:5432\/sluice/);
    assert.match(text, /console {4}http:\/\/127\.0\.0\.1:8083\/console\//);
  });
});
