// Serving the console: files with their content types, caching and security headers, no way out
// of dist/console, config.json per process, whoami, and CORS for the console's origin only.
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { mkdtempSync, mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConsoleAssets } from '../../src/core/console/assets.js';
import { consoleSections, mountConsole } from '../../src/core/console/routes.js';
import { ServiceDirectory } from '../../src/core/directory.js';
import { Router, startHttpServer } from '../../src/core/http/index.js';
import { consoleOriginPolicy } from '../../src/core/http/cors.js';
import type { RunningService } from '../../src/core/service.js';
import { startStreams } from '../../src/streams/index.js';
import { ensureConsoleBuilt } from '../helpers/browser.js';
import { makeTestContext, type TestContext } from '../helpers/context.js';
import { rawRequest } from '../helpers/raw-http.js';

describe('console serving', () => {
  let t: TestContext;
  let streams: RunningService;
  let base: string;
  let port: number;

  before(async () => {
    ensureConsoleBuilt();
    t = await makeTestContext();
    streams = await startStreams(t.ctx);
    base = streams.addresses.http!;
    port = Number(new URL(base).port);
  });
  after(async () => {
    await streams.close();
    await t.cleanup();
  });

  it('serves the page with a strict CSP, nosniff and no caching of the page itself', async () => {
    const res = await fetch(`${base}/console/`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    const csp = res.headers.get('content-security-policy') ?? '';
    for (const directive of [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "img-src 'self' data: blob:",
      "connect-src 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
      "form-action 'self'",
    ])
      assert.ok(csp.includes(directive), `CSP has ${directive}: ${csp}`);
    const html = await res.text();
    assert.doesNotMatch(html, /<script>|<style>|\son\w+=/, 'no inline script, style or handler');
    const script = /src="\/console\/(app-[A-Z0-9]+\.js)"/.exec(html)?.[1];
    assert.ok(script, html);

    const js = await fetch(`${base}/console/${script}`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(js.status, 200);
    assert.equal(js.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(js.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    const etag = js.headers.get('etag');
    assert.ok(etag);
    await js.arrayBuffer();
    const again = await fetch(`${base}/console/${script}`, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    const css = /href="\/console\/(app-[A-Z0-9]+\.css)"/.exec(html)?.[1];
    assert.ok(css);
    assert.equal(
      (await fetch(`${base}/console/${css}`)).headers.get('content-type'),
      'text/css; charset=utf-8',
    );
  });

  it('never serves a file outside dist/console', async () => {
    for (const path of [
      '/console/../package.json',
      '/console/..%2f..%2fpackage.json',
      '/console/%2e%2e/%2e%2e/package.json',
      '/console/%2e%2e%2f%2e%2e%2fpackage.json',
      '/console/..\\..\\package.json',
      '/console/.build-stamp',
      '/console//etc/passwd',
      '/console/%2fetc%2fpasswd',
      '/console/index.html%00.js',
    ]) {
      const res = await rawRequest(port, path, { method: 'GET' });
      assert.equal(res.status, 404, `${path}: ${res.text}`);
      assert.doesNotMatch(res.text, /"name"\s*:\s*"sluice"|root:/, path);
    }
  });

  it('answers config.json with only its own section when the service runs alone', async () => {
    const res = await fetch(`${base}/console/config.json`);
    assert.deepEqual(await res.json(), { services: ['streams'], bases: { streams: '' }, signIn: true });
  });

  it('tells who the key belongs to, and 401 without a valid one', async () => {
    const ok = await fetch(`${base}/console/whoami`, { headers: { authorization: `Bearer ${t.token}` } });
    assert.equal(ok.status, 200);
    const who = (await ok.json()) as { tenant: string; scopes: string[] };
    assert.equal(who.tenant, 'default');
    assert.deepEqual(who.scopes, ['admin']);
    assert.equal((await fetch(`${base}/console/whoami`)).status, 401);
    const bad = await fetch(`${base}/console/whoami`, { headers: { authorization: 'Bearer sk_nope' } });
    assert.equal(bad.status, 401);
  });

  /** A server with only the console routes, its files from `folder` (a temp dir `setUp` fills). */
  async function withConsole(
    setUp: (dir: string) => string,
    check: (url: string, dir: string) => Promise<void>,
  ): Promise<void> {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-console-files-'));
    const router = new Router();
    mountConsole(router, { self: 'streams', ctx: t.ctx, assets: new ConsoleAssets(setUp(dir)) });
    const server = await startHttpServer({
      name: 't',
      host: '127.0.0.1',
      port: 0,
      router,
      errorBody: (e) => e,
    });
    try {
      await check(server.url, dir);
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('says the console is not built when dist/console is missing', async () => {
    await withConsole(
      (dir) => join(dir, 'none'),
      async (url) => {
        const res = await fetch(`${url}/console/`);
        assert.equal(res.status, 404);
        assert.match(await res.text(), /npm run build/);
      },
    );
  });

  it('serves files of a rebuilt console without a restart, with the right types', async () => {
    await withConsole(
      (dir) => {
        mkdirSync(join(dir, 'img'));
        writeFileSync(join(dir, 'index.html'), '<!doctype html><title>a</title>');
        writeFileSync(join(dir, 'img', 'shot.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
        return dir;
      },
      async (url, dir) => {
        assert.equal((await fetch(`${url}/console/img/shot.png`)).headers.get('content-type'), 'image/png');
        assert.match(await (await fetch(`${url}/console`)).text(), /<title>a</);
        // A rebuild writes a new index.html; the next request sees it.
        writeFileSync(join(dir, 'index.html'), '<!doctype html><title>b</title>');
        utimesSync(join(dir, 'index.html'), new Date(), new Date(Date.now() + 5000));
        assert.match(await (await fetch(`${url}/console/`)).text(), /<title>b</);
      },
    );
  });
});

describe('console placement and CORS', () => {
  it('puts the console on the automation port when the process runs automation', () => {
    const all = { directory: new ServiceDirectory(['ratelimit', 'streams', 'automation']) };
    assert.deepEqual(consoleSections('automation', all), ['automation', 'streams', 'ratelimit']);
    assert.equal(consoleSections('streams', all), undefined);
    assert.deepEqual(consoleSections('ratelimit', { directory: new ServiceDirectory(['ratelimit']) }), [
      'ratelimit',
    ]);
    assert.deepEqual(consoleSections('streams', {}), ['streams']);
  });

  it('allows only the console origin: same host as the request, the automation port', () => {
    const policy = consoleOriginPolicy(() => 8083);
    assert.equal(policy.allows('http://localhost:8083', 'localhost:8082'), true);
    assert.equal(policy.allows('http://10.0.0.5:8083', '10.0.0.5:8082'), true);
    assert.equal(policy.allows('http://evil.example:8083', 'localhost:8082'), false);
    assert.equal(policy.allows('http://localhost:9999', 'localhost:8082'), false);
    assert.equal(policy.allows('https://localhost:8083', 'localhost:8082'), false);
    assert.equal(policy.allows('null', 'localhost:8082'), false);
    assert.equal(policy.allows('http://localhost:8083', undefined), false);
    assert.equal(
      consoleOriginPolicy(() => undefined).allows('http://localhost:8083', 'localhost:8082'),
      false,
    );
  });

  it('answers preflights for the console origin and refuses others under sluice serve', async () => {
    const t = await makeTestContext();
    const directory = new ServiceDirectory(['ratelimit', 'streams', 'automation']);
    directory.publish('automation', 18083);
    const streams = await startStreams({ ...t.ctx, directory });
    const port = Number(new URL(streams.addresses.http!).port);
    try {
      const allowed = await rawRequest(port, '/streams/topics', {
        method: 'OPTIONS',
        headers: {
          host: `localhost:${port}`,
          origin: 'http://localhost:18083',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
      });
      assert.equal(allowed.status, 204);
      assert.equal(allowed.headers['access-control-allow-origin'], 'http://localhost:18083');
      assert.match(allowed.headers['access-control-allow-headers'] ?? '', /authorization/);
      assert.equal(allowed.headers['access-control-allow-credentials'], undefined);

      const refused = await rawRequest(port, '/streams/topics', {
        method: 'OPTIONS',
        headers: {
          host: `localhost:${port}`,
          origin: 'http://evil.example',
          'access-control-request-method': 'GET',
        },
      });
      assert.equal(refused.status, 403);
      assert.equal(refused.headers['access-control-allow-origin'], undefined);

      const read = await rawRequest(port, '/streams/topics', {
        method: 'GET',
        headers: {
          host: `localhost:${port}`,
          origin: 'http://localhost:18083',
          authorization: `Bearer ${t.token}`,
        },
      });
      assert.equal(read.status, 200);
      assert.equal(read.headers['access-control-allow-origin'], 'http://localhost:18083');
      // This port does not serve the console under `sluice serve`: the automation port does.
      assert.equal((await rawRequest(port, '/console/', { method: 'GET' })).status, 404);
    } finally {
      await streams.close();
      await t.cleanup();
    }
  });
});
