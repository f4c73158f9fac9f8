// Wire behaviour of the automation client that goes beyond one request: options and their
// precedence, multipart run inputs, error mapping, retries, time-outs, run_and_wait polling and
// the NDJSON experiment stream. The server is a real node:http server on a free port.
import * as assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  isClientError,
  ClientAuthError,
  ServiceClient,
  ClientError,
  ClientForbiddenError,
  ClientNotFoundError,
  ClientRateLimitError,
  ClientServerError,
  ClientTimeoutError,
  ClientValidationError,
  toFile,
} from '../../src/automation/client/index.js';
import { envelope, formOf, json, RUN_DONE, startFakeApi } from './client-fixture.js';
import type { FakeApi } from './client-fixture.js';
import { waitUntil } from '../helpers/wait.js';

let api: FakeApi;

before(async () => {
  api = await startFakeApi();
});
after(async () => api.close());
beforeEach(() => api.reset());

/** A client with fast retries so tests never sleep for long. */
function fast(extra: ConstructorParameters<typeof ServiceClient>[0] = {}): ServiceClient {
  return new ServiceClient({
    api_key: 'sk-test',
    base_url: api.url,
    retry_base_seconds: 0.01,
    retry_max_seconds: 1,
    env: {},
    ...extra,
  });
}

function hasCode(code: string) {
  return (e: unknown) => isClientError(e) && e.code === code;
}

describe('options', () => {
  it('the constructor wins over SERVICE_API_KEY and SERVICE_BASE_URL', async () => {
    const client = new ServiceClient({
      api_key: 'from-ctor',
      base_url: api.url,
      env: { SERVICE_API_KEY: 'from-env', SERVICE_BASE_URL: 'http://127.0.0.1:9' },
    });
    await client.auth.check();
    assert.equal(api.log[0]!.headers.authorization, 'Bearer from-ctor');
    assert.equal(client.apiRoot, `${api.url}/api/v1`);
  });

  it('falls back to the environment when the constructor is silent', async () => {
    const client = new ServiceClient({
      env: { SERVICE_API_KEY: 'from-env', SERVICE_BASE_URL: `${api.url}/` },
    });
    await client.auth.check();
    assert.equal(api.log[0]!.headers.authorization, 'Bearer from-env');
    assert.equal(api.log[0]!.path, '/api/v1/auth/check');
  });

  it('reads process.env by default', async () => {
    const saved = { key: process.env['SERVICE_API_KEY'], url: process.env['SERVICE_BASE_URL'] };
    process.env['SERVICE_API_KEY'] = 'from-process';
    process.env['SERVICE_BASE_URL'] = api.url;
    try {
      await new ServiceClient().auth.check();
      assert.equal(api.log[0]!.headers.authorization, 'Bearer from-process');
    } finally {
      if (saved.key === undefined) delete process.env['SERVICE_API_KEY'];
      else process.env['SERVICE_API_KEY'] = saved.key;
      if (saved.url === undefined) delete process.env['SERVICE_BASE_URL'];
      else process.env['SERVICE_BASE_URL'] = saved.url;
    }
  });

  it('accepts camelCase option names and a base_url that already ends in /api/v1', async () => {
    const client = new ServiceClient({
      apiKey: 'camel',
      baseUrl: `${api.url}/api/v1/`,
      timeoutSeconds: 5,
      env: {},
    });
    await client.auth.check();
    assert.equal(api.log[0]!.headers.authorization, 'Bearer camel');
    assert.equal(api.log[0]!.path, '/api/v1/auth/check');
  });

  it('defaults: localhost:8083, and no Authorization header without a key', async () => {
    assert.equal(new ServiceClient({ env: {} }).apiRoot, 'http://localhost:8083/api/v1');
    await new ServiceClient({ base_url: api.url, env: {} }).auth.check();
    assert.equal(api.log[0]!.headers.authorization, undefined);
  });

  it('rejects bad option values with configuration_error', () => {
    const bad = hasCode('configuration_error');
    assert.throws(() => new ServiceClient({ timeout_seconds: 0, env: {} }), bad);
    assert.throws(() => new ServiceClient({ timeout_seconds: Number.NaN, env: {} }), bad);
    assert.throws(() => new ServiceClient({ timeout_seconds: -1, env: {} }), bad);
    assert.throws(() => new ServiceClient({ max_retries: 1.5, env: {} }), bad);
    assert.throws(() => new ServiceClient({ base_url: 'not a url', env: {} }), bad);
    assert.throws(() => new ServiceClient({ base_url: 'ftp://x', env: {} }), bad);
    assert.throws(() => new ServiceClient({ env: { SERVICE_BASE_URL: 'nope' } }), bad);
  });
});

describe('run', () => {
  it('sends JSON { target, input, overrides, metadata } with version and wait_for_completion', async () => {
    api.use(() => json('r', RUN_DONE));
    const client = fast();
    const run = await client.run(
      'workflows.echo-report@1.2.3',
      { text: 'hi', n: [1, 2] },
      {
        waitForCompletion: 30,
        overrides: { steps: { normalize: { text: 'x' } } },
        metadata: { origin: 'test' },
      },
    );
    const rec = api.log[0]!;
    assert.equal(rec.method, 'POST');
    assert.equal(rec.path, '/api/v1/runs');
    assert.deepEqual(rec.query, { version: '1.2.3', wait_for_completion: '30' });
    assert.equal(rec.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(rec.body.toString()), {
      target: 'workflows.echo-report',
      input: { text: 'hi', n: [1, 2] },
      overrides: { steps: { normalize: { text: 'x' } } },
      metadata: { origin: 'test' },
    });
    assert.equal(run.finished, true);
  });

  it('builds the target from an object and omits optional parts', async () => {
    api.use(() => json('r', { id: 'run_2', type: 'agent', finished: false }, 201));
    const run = await fast().run({ type: 'agent', slug: 'echo-agent' });
    assert.deepEqual(JSON.parse(api.log[0]!.body.toString()), { target: 'agents.echo-agent', input: {} });
    assert.deepEqual(api.log[0]!.query, {});
    assert.equal(run.finished, false);
  });

  it('refuses malformed targets and inputs without a request', async () => {
    const client = fast();
    const bad = hasCode('invalid_argument');
    await assert.rejects(client.run('workflows.x@'), bad);
    await assert.rejects(client.run('@1.0.0'), bad);
    await assert.rejects(client.run(''), bad);
    await assert.rejects(client.run({ type: 'workflow' }), bad);
    await assert.rejects(client.run('workflows.x', [] as unknown as Record<string, unknown>), bad);
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic['self'] = cyclic;
    await assert.rejects(client.run('workflows.x', cyclic), TypeError);
    assert.equal(api.log.length, 0);
  });

  it('sends file values found anywhere in the input as multipart parts with $file references', async () => {
    api.use(() => json('r', { id: 'run_3', type: 'workflow', finished: false }, 201));
    await fast().run(
      'workflows.extract',
      {
        language: 'en',
        contract: new File(['%PDF-contract'], 'contract.pdf', { type: 'application/pdf' }),
        raw: Buffer.from([1, 2, 3]),
        docs: [
          toFile('first', 'a.txt'),
          { name: 'b.csv', data: new Uint8Array([0x61, 0x2c, 0x62]), contentType: 'text/csv' },
        ],
        nested: {
          legacy: { content: new Uint8Array([9]), filename: 'legacy.bin', mimeType: 'application/x-test' },
        },
        person: { name: 'Ann', data: 'not a file' },
      },
      { metadata: { origin: 'test' }, version: 'main' },
    );
    const rec = api.log[0]!;
    assert.match(String(rec.headers['content-type']), /^multipart\/form-data; boundary=/);
    assert.deepEqual(rec.query, { version: 'main' });
    const form = await formOf(rec);
    assert.deepEqual(
      [...form.keys()],
      [
        'target',
        'input',
        'metadata',
        'files.contract',
        'files.raw',
        'files.docs.0',
        'files.docs.1',
        'files.nested.legacy',
      ],
    );
    assert.equal(form.get('target'), 'workflows.extract');
    assert.deepEqual(JSON.parse(form.get('input') as string), {
      language: 'en',
      contract: { $file: 'files.contract' },
      raw: { $file: 'files.raw' },
      docs: [{ $file: 'files.docs.0' }, { $file: 'files.docs.1' }],
      nested: { legacy: { $file: 'files.nested.legacy' } },
      person: { name: 'Ann', data: 'not a file' },
    });
    assert.deepEqual(JSON.parse(form.get('metadata') as string), { origin: 'test' });
    const part = (name: string) => form.get(name) as File;
    assert.equal(part('files.contract').name, 'contract.pdf');
    assert.equal(part('files.contract').type, 'application/pdf');
    assert.equal(await part('files.contract').text(), '%PDF-contract');
    assert.equal(part('files.raw').name, 'raw');
    assert.deepEqual([...new Uint8Array(await part('files.raw').arrayBuffer())], [1, 2, 3]);
    assert.equal(part('files.docs.0').name, 'a.txt');
    assert.equal(part('files.docs.0').type, 'text/plain');
    assert.equal(await part('files.docs.0').text(), 'first');
    assert.equal(part('files.docs.1').type, 'text/csv');
    assert.equal(part('files.nested.legacy').name, 'legacy.bin');
    assert.equal(part('files.nested.legacy').type, 'application/x-test');
  });

  it('rerun sends version=original and wait_for_completion', async () => {
    api.use(() => json('r', { ...RUN_DONE, id: 'run_9' }));
    const run = await fast().rerun('run_1', { version: 'original', wait_for_completion: 10 });
    assert.equal(api.log[0]!.method, 'POST');
    assert.equal(api.log[0]!.path, '/api/v1/runs/run_1/rerun');
    assert.deepEqual(api.log[0]!.query, { version: 'original', wait_for_completion: '10' });
    assert.equal(run.id, 'run_9');
  });
});

describe('run_and_wait', () => {
  it('asks the server to wait, then polls GET /runs/{id} until a terminal status', async () => {
    const states = ['pending', 'running', 'running', 'completed'];
    api.use((req) => {
      if (req.method === 'POST') return json('r', { id: 'run_5', type: 'workflow', finished: false }, 202);
      const status = states.shift() ?? 'completed';
      return status === 'completed'
        ? json('r', { ...RUN_DONE, id: 'run_5' })
        : json('r', { id: 'run_5', type: 'workflow', finished: false, execution: { status } });
    });
    const run = await fast().run_and_wait(
      'workflows.echo-report',
      { text: 'hi' },
      { poll_interval_seconds: 0.01, max_wait_seconds: 30 },
    );
    assert.equal(run.finished, true);
    assert.deepEqual(run.output, { text: 'HELLO', length: 5 });
    assert.equal(run.id, 'run_5');
    assert.deepEqual(
      api.log.map((r) => `${r.method} ${r.path}`),
      ['POST /api/v1/runs', ...Array(4).fill('GET /api/v1/runs/run_5')],
    );
    assert.deepEqual(api.log[0]!.query, { wait_for_completion: '30' });
  });

  it('bounds wait_for_completion by the per-request time-out and 600', async () => {
    api.use(() => json('r', RUN_DONE));
    await fast({ timeout_seconds: 20 }).run_and_wait('workflows.echo-report', {}, { maxWaitSeconds: 1000 });
    await fast().runAndWait('workflows.echo-report');
    assert.equal(api.log[0]!.query['wait_for_completion'], '19');
    assert.equal(api.log[1]!.query['wait_for_completion'], '59');
    assert.equal(api.log.length, 2);
  });

  it('returns a failed run instead of throwing', async () => {
    api.use(() =>
      json('r', {
        ...RUN_DONE,
        output: null,
        error: 'step normalize failed',
        execution: { status: 'failed' },
      }),
    );
    const run = await fast().run_and_wait('workflows.echo-report');
    assert.equal(run.finished, true);
    assert.equal(run.execution?.status, 'failed');
    assert.equal(run.error, 'step normalize failed');
  });

  it('fetches the run when the finished answer carries no output', async () => {
    api.use((req) =>
      req.method === 'POST'
        ? json('r', { id: 'run_6', type: 'workflow', finished: true })
        : json('r', { ...RUN_DONE, id: 'run_6' }),
    );
    const run = await fast().run_and_wait('workflows.echo-report');
    assert.deepEqual(run.output, RUN_DONE.output);
    assert.deepEqual(
      api.log.map((r) => r.method),
      ['POST', 'GET'],
    );
  });

  it('throws ClientTimeoutError with the run id when the run outlives max_wait_seconds', async (t) => {
    api.use((req) =>
      json('r', {
        id: 'run_7',
        type: 'workflow',
        finished: false,
        execution: { status: req.method === 'POST' ? 'pending' : 'running' },
      }),
    );
    // The wait is measured on Date.now(); the test moves that clock itself, so the client
    // polls until the test says the time is up, however slowly the machine answers.
    t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
    let settled = false;
    const waiting = fast()
      .run_and_wait('workflows.slow', {}, { max_wait_seconds: 0.2, poll_interval_seconds: 0.01 })
      .finally(() => (settled = true));
    waiting.catch(() => {});
    await waitUntil('two polls', () => api.log.length >= 3);
    assert.equal(settled, false, 'still polling while the clock stands before max_wait_seconds');
    t.mock.timers.tick(200);
    await assert.rejects(waiting, (e: unknown) => {
      assert.ok(e instanceof ClientTimeoutError);
      assert.equal(e.code, 'timeout');
      assert.equal(e.runId, 'run_7');
      return true;
    });
    assert.ok(api.log.slice(1).every((r) => r.method === 'GET' && r.path === '/api/v1/runs/run_7'));
  });

  it("the caller's signal stops the polling with the signal's reason", async () => {
    api.use(() =>
      json('r', { id: 'run_8', type: 'workflow', finished: false, execution: { status: 'running' } }),
    );
    const controller = new AbortController();
    const pending = fast().run_and_wait(
      'workflows.slow',
      {},
      { poll_interval_seconds: 0.05, signal: controller.signal },
    );
    setTimeout(() => controller.abort(new Error('stop waiting')), 150);
    await assert.rejects(pending, /stop waiting/);
  });

  it('rejects non-positive wait settings', async () => {
    await assert.rejects(
      fast().run_and_wait('workflows.x', {}, { max_wait_seconds: 0 }),
      hasCode('configuration_error'),
    );
    await assert.rejects(
      fast().run_and_wait('workflows.x', {}, { poll_interval_seconds: -1 }),
      hasCode('configuration_error'),
    );
    assert.equal(api.log.length, 0);
  });
});

describe('errors', () => {
  const cases: [number, new (...args: never[]) => ClientError, string][] = [
    [400, ClientValidationError, 'validation_error'],
    [401, ClientAuthError, 'auth_error'],
    [403, ClientForbiddenError, 'forbidden'],
    [404, ClientNotFoundError, 'not_found'],
    [429, ClientRateLimitError, 'rate_limited'],
    [500, ClientServerError, 'server_error'],
    [503, ClientServerError, 'server_error'],
  ];
  for (const [status, Class, code] of cases) {
    it(`${status} → ${Class.name} with status, requestId, envelope and code`, async () => {
      const body = envelope('input.text', 'is required', 'invalid_value', 'req-body');
      api.use(() => json(`req-${status}`, body, status, status === 429 ? { 'retry-after': '7' } : {}));
      await assert.rejects(fast({ max_retries: 0 }).runs.get('run_1'), (e: unknown) => {
        assert.ok(e instanceof Class);
        assert.ok(e instanceof ClientError);
        assert.ok(isClientError(e));
        assert.equal(e.code, code);
        assert.equal(e.status, status);
        assert.equal(e.requestId, `req-${status}`);
        assert.deepEqual(e.envelope, body);
        assert.equal(e.issues[0]?.field, 'input.text');
        assert.match(e.message, /input\.text: is required/);
        assert.equal(e.retryAfter, status === 429 ? 7 : undefined);
        return true;
      });
    });
  }

  it('takes requestId from the envelope when the header is missing, and maps other statuses to ClientError', async () => {
    api.use(() => ({ status: 413, json: envelope('<root>', 'body too large', 'too_large', 'req-env') }));
    await assert.rejects(fast().files.upload(Buffer.from('x')), (e: unknown) => {
      assert.ok(e instanceof ClientError);
      assert.equal(e.constructor, ClientError);
      assert.equal(e.code, 'http_error');
      assert.equal(e.status, 413);
      assert.equal(e.requestId, 'req-env');
      assert.match(e.message, /body too large/);
      return true;
    });
  });

  it('keeps a non-JSON error body in the message', async () => {
    api.use(() => ({
      status: 404,
      headers: { 'content-type': 'text/plain', 'x-request-id': 'rq' },
      body: 'no such thing',
    }));
    await assert.rejects(fast().runs.get('nope'), (e: unknown) => {
      assert.ok(e instanceof ClientNotFoundError);
      assert.equal(e.envelope, undefined);
      assert.match(e.message, /no such thing/);
      return true;
    });
  });

  it('an HTML page instead of JSON says base_url is wrong', async () => {
    api.use(() => ({
      status: 200,
      headers: { 'content-type': 'text/html' },
      body: '<html>marketing</html>',
    }));
    await assert.rejects(
      fast().auth.check(),
      (e: unknown) => isClientError(e) && e.code === 'invalid_response' && /base_url/.test(e.message),
    );
  });

  it('invalid JSON in a 2xx is invalid_response', async () => {
    api.use(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"runs": [' }));
    await assert.rejects(fast().runs.list(), hasCode('invalid_response'));
  });
});

describe('retries', () => {
  it('retries a GET on 5xx and succeeds (attempts counted)', async () => {
    let n = 0;
    api.use(() =>
      ++n <= 2 ? json('r', envelope('<root>', 'busy', 'unavailable', 'r'), 503) : json('r', RUN_DONE),
    );
    const run = await fast().runs.get('run_1');
    assert.equal(run.id, 'run_1');
    assert.equal(api.log.length, 3);
  });

  it('gives up after max_retries and throws the last error', async () => {
    api.use(() => json('r', {}, 500));
    await assert.rejects(fast({ max_retries: 3 }).runs.get('run_1'), ClientServerError);
    assert.equal(api.log.length, 4);
    api.reset();
    api.use(() => json('r', {}, 500));
    await assert.rejects(fast().runs.get('run_1'), ClientServerError);
    assert.equal(api.log.length, 3, 'default max_retries is 2');
  });

  it('honours Retry-After on 429, also for POST /runs', async () => {
    let n = 0;
    api.use(() =>
      ++n === 1
        ? json('r', envelope('<root>', 'slow down', 'rate_limited', 'r'), 429, { 'retry-after': '0' })
        : json('r', RUN_DONE),
    );
    await fast().run('workflows.echo-report', {});
    assert.equal(api.log.length, 2);
    assert.equal(api.log[1]!.method, 'POST');
  });

  it('does not retry when Retry-After asks for longer than retry_max_seconds', async () => {
    api.use(() =>
      json('r', envelope('<root>', 'slow down', 'rate_limited', 'r'), 429, { 'retry-after': '120' }),
    );
    await assert.rejects(
      fast().runs.get('run_1'),
      (e: unknown) => e instanceof ClientRateLimitError && e.retryAfter === 120,
    );
    assert.equal(api.log.length, 1);
  });

  it('never retries POST /runs on 5xx without an idempotency key', async () => {
    api.use(() => json('r', {}, 500));
    await assert.rejects(fast().run('workflows.echo-report', {}), ClientServerError);
    assert.equal(api.log.length, 1);
  });

  it('retries POST /runs on 5xx when an idempotency key is given, sending the same key', async () => {
    let n = 0;
    api.use(() => (++n === 1 ? json('r', {}, 502) : json('r', RUN_DONE)));
    await fast().run('workflows.echo-report', { a: 1 }, { idempotencyKey: 'key-1' });
    assert.equal(api.log.length, 2);
    assert.deepEqual(
      api.log.map((r) => r.headers['idempotency-key']),
      ['key-1', 'key-1'],
    );
    assert.deepEqual(api.log[0]!.body, api.log[1]!.body);
  });

  it('retries multipart POSTs with the whole body again', async () => {
    let n = 0;
    api.use(() => (++n === 1 ? json('r', {}, 503) : json('r', RUN_DONE)));
    await fast().run('workflows.x', { doc: toFile('abc', 'a.txt') }, { idempotencyKey: 'k' });
    assert.equal(api.log.length, 2);
    assert.equal(await ((await formOf(api.log[1]!)).get('files.doc') as File).text(), 'abc');
  });

  it('treats sync and cancel as idempotent POSTs', async () => {
    let n = 0;
    api.use((req) => (++n % 2 === 1 ? json('r', {}, 502) : json('r', { ok: true, path: req.path })));
    await fast().automations.sync('workflows.echo-report');
    await fast().runs.cancel('run_1');
    assert.deepEqual(
      api.log.map((r) => r.path),
      [
        '/api/v1/automations/workflows.echo-report/sync',
        '/api/v1/automations/workflows.echo-report/sync',
        '/api/v1/runs/run_1/cancel',
        '/api/v1/runs/run_1/cancel',
      ],
    );
  });

  it('does not retry 4xx answers', async () => {
    api.use(() => json('r', envelope('target', 'unknown', 'not_found', 'r'), 404));
    await assert.rejects(fast().runs.get('x'), ClientNotFoundError);
    assert.equal(api.log.length, 1);
  });

  it('retries a GET whose connection dropped, but not a POST /runs', async () => {
    let n = 0;
    api.use((_req, res) => {
      if (++n === 1) {
        res.socket?.destroy();
        return 'handled';
      }
      return json('r', RUN_DONE);
    });
    const run = await fast().runs.get('run_1');
    assert.equal(run.id, 'run_1');
    assert.equal(api.log.length, 2);

    api.reset();
    api.use((_req, res) => {
      res.socket?.destroy();
      return 'handled';
    });
    await assert.rejects(fast().run('workflows.x', {}), hasCode('connection_error'));
    assert.equal(api.log.length, 1);
  });

  it('a refused connection is a connection_error after the retries', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, '127.0.0.1', () => {
        const p = (probe.address() as { port: number }).port;
        probe.close(() => resolve(p));
      });
    });
    const client = new ServiceClient({
      api_key: 'k',
      base_url: `http://127.0.0.1:${port}`,
      retry_base_seconds: 0.01,
      env: {},
    });
    await assert.rejects(
      client.run('workflows.x', {}),
      (e: unknown) => isClientError(e) && e.code === 'connection_error' && e.status === 0,
    );
  });
});

describe('time-outs and cancellation', () => {
  function stall(): void {
    // Holds every request without answering; api.close() drops the sockets.
    api.use(() => 'handled');
  }

  it('a request past timeout_seconds throws ClientTimeoutError and is not retried', async () => {
    stall();
    await assert.rejects(fast({ timeout_seconds: 0.2 }).runs.get('run_1'), (e: unknown) => {
      assert.ok(e instanceof ClientTimeoutError);
      assert.equal(e.code, 'timeout');
      assert.equal(e.status, 0);
      return true;
    });
    assert.equal(api.log.length, 1);
  });

  it('a per-call timeoutSeconds overrides the client default', async () => {
    stall();
    await assert.rejects(fast().auth.check({ timeoutSeconds: 0.1 }), ClientTimeoutError);
  });

  it('a body that stalls after the headers also times out', async () => {
    api.use((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"runs": [');
      return 'handled';
    });
    await assert.rejects(fast({ timeout_seconds: 0.2 }).runs.list(), ClientTimeoutError);
  });

  it("the caller's AbortSignal cancels the request with the signal's reason", async () => {
    stall();
    const controller = new AbortController();
    const pending = fast().runs.get('run_1', {}, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('user gave up')), 50);
    await assert.rejects(pending, /user gave up/);
    await assert.rejects(
      fast().runs.get('run_1', {}, { signal: AbortSignal.abort(new Error('already')) }),
      /already/,
    );
  });
});

describe('experiments.stream (NDJSON)', () => {
  const events = [
    {
      type: 'run.completed',
      experimentId: 'exp_1',
      runId: 'run_a',
      exampleId: 'ex_1',
      status: 'completed',
      score: 1,
      passed: true,
    },
    {
      type: 'run.completed',
      experimentId: 'exp_1',
      runId: 'run_b',
      exampleId: 'ex_2',
      status: 'failed',
      score: 0,
      passed: false,
    },
    { type: 'experiment.completed', experimentId: 'exp_1', status: 'completed' },
  ];

  it('yields one event per line, across chunk boundaries, blank lines and a final line without newline', async () => {
    api.use((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson', 'x-request-id': 'rs' });
      const text = `${JSON.stringify(events[0])}\n\n${JSON.stringify(events[1])}\n${JSON.stringify(events[2])}`;
      const cut = [0, 17, 60, text.length - 5, text.length];
      let i = 0;
      const tick = (): void => {
        if (i + 1 >= cut.length) {
          res.end();
          return;
        }
        res.write(text.slice(cut[i], cut[i + 1]));
        i++;
        setTimeout(tick, 5);
      };
      tick();
      return 'handled';
    });
    const seen: unknown[] = [];
    for await (const event of fast().experiments.stream('aut_1', { examples: ['ex_1', 'ex_2'] }))
      seen.push(event);
    assert.deepEqual(seen, events);
    const rec = api.log[0]!;
    assert.equal(rec.method, 'POST');
    assert.equal(rec.path, '/api/v1/automations/aut_1/experiments/stream');
    assert.equal(rec.headers.accept, 'application/x-ndjson');
    assert.deepEqual(JSON.parse(rec.body.toString()), { examples: ['ex_1', 'ex_2'] });
  });

  it('a line that is not JSON ends the stream with invalid_response', async () => {
    api.use(() => ({
      status: 200,
      headers: { 'content-type': 'application/x-ndjson' },
      body: `${JSON.stringify(events[0])}\nnot json\n`,
    }));
    const seen: unknown[] = [];
    await assert.rejects(async () => {
      for await (const event of fast().experiments.stream('aut_1')) seen.push(event);
    }, hasCode('invalid_response'));
    assert.equal(seen.length, 1);
  });

  it('an error status before the stream starts maps like any other call', async () => {
    api.use(() => json('rq', envelope('examples.0', 'unknown example', 'not_found', 'rq'), 404));
    await assert.rejects(async () => {
      for await (const _ of fast().experiments.stream('aut_1', { examples: ['nope'] })) {
        /* none */
      }
    }, ClientNotFoundError);
  });

  it('silence longer than timeout_seconds between events is a ClientTimeoutError', async () => {
    api.use((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write(`${JSON.stringify(events[0])}\n`);
      return 'handled';
    });
    const seen: unknown[] = [];
    // The same time-out also bounds the answer's headers and first line, so it is long enough
    // that only a hang, not a slow machine, could miss them; the silence after them is endless.
    await assert.rejects(async () => {
      for await (const event of fast({ timeout_seconds: 2 }).experiments.stream('aut_1')) seen.push(event);
    }, ClientTimeoutError);
    assert.equal(seen.length, 1);
  });

  it('breaking out of the loop closes the connection', async () => {
    let closed: Promise<void> = Promise.resolve();
    api.use((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write(`${JSON.stringify(events[0])}\n`);
      closed = new Promise((resolve) => res.on('close', () => resolve()));
      return 'handled';
    });
    for await (const event of fast().experiments.stream('aut_1')) {
      assert.equal((event as { runId: string }).runId, 'run_a');
      break;
    }
    await closed;
  });
});
