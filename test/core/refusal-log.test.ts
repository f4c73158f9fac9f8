// A refused key is logged once per request at info: service, route template and reason (missing,
// malformed, unknown, revoked, wrong_secret, scope), never the key (a digest of its id at most);
// a flood is capped per second with one line counting what was left out.
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { pino } from 'pino';
import { KeyStore } from '../../src/core/auth/index.js';
import { Router, startHttpServer, type HttpServerHandle } from '../../src/core/http/index.js';
import { REFUSAL_LINES_PER_SECOND } from '../../src/core/http/refusal-log.js';
import { describeEachTransport } from '../helpers/transports.js';
import { waitUntil } from '../helpers/wait.js';

describeEachTransport('refused keys in the log', (transport) => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-refusal-'));
  const keys = KeyStore.open(dir);
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  let server: HttpServerHandle;
  let reader: string;
  let revoked: string;

  before(async () => {
    reader = (await keys.create({ scopes: ['streams:read'] })).token;
    const gone = await keys.create({});
    await keys.revoke(gone.record.id);
    revoked = gone.token;
    server = await startHttpServer({
      transport,
      name: 'refusals',
      host: '127.0.0.1',
      port: 0,
      router: new Router()
        .get('/topics/:name', (_q, s) => s.json({}), { scope: 'streams:read' })
        .post('/topics/:name', (_q, s) => s.json({}), { scope: 'streams:write' }),
      errorBody: ({ status, code, message }) => ({ status, code, message }),
      authenticator: keys,
      log,
    });
  });
  after(async () => {
    await server.close();
    await keys.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const refusals = () => lines.filter((l) => l.msg === 'request refused: API key');
  const call = async (method: string, authorization: string | undefined) => {
    const res = await fetch(`${server.url}/topics/secret-topic-name`, {
      method,
      headers: authorization === undefined ? {} : { authorization },
    });
    await res.arrayBuffer();
    return res.status;
  };

  it('names the route template and the reason, never the key or the path', async () => {
    const wrongSecret = reader.slice(0, -4) + 'AAAA';
    const cases: [string, string | undefined, number, string][] = [
      ['GET', undefined, 401, 'missing'],
      ['GET', 'Basic %%%', 401, 'malformed'],
      ['GET', 'Bearer sk_nope', 401, 'unknown'],
      ['GET', `Bearer ${revoked}`, 401, 'revoked'],
      ['GET', `Bearer ${wrongSecret}`, 401, 'wrong_secret'],
      ['POST', `Bearer ${reader}`, 403, 'scope'],
    ];
    for (const [method, authorization, status, reason] of cases) {
      const before = refusals().length;
      assert.equal(await call(method, authorization), status, reason);
      await waitUntil(`a ${reason} line`, () => refusals().length > before);
      const line = refusals().at(-1)!;
      assert.equal(line.reason, reason);
      assert.equal(line.route, '/topics/:name');
      assert.equal(line.service, 'refusals');
      assert.equal(line.level, 30, 'info');
    }
    assert.equal(await call('GET', `Bearer ${reader}`), 200);
    const text = JSON.stringify(refusals());
    for (const secret of [reader, revoked, wrongSecret, reader.split('_')[1]!, 'secret-topic-name'])
      assert.ok(!text.includes(secret), 'no key, key id or path in the log');
    assert.match(String(refusals().at(-1)!.keyIdSha256), /^[0-9a-f]{8}$/);
    assert.equal(refusals().at(-1)!.scope, 'streams:write');
  });

  it('caps a flood of bad keys and says how many lines it left out', async () => {
    lines.length = 0;
    const flood = 4 * REFUSAL_LINES_PER_SECOND;
    await Promise.all(Array.from({ length: flood }, () => call('GET', 'Bearer sk_nope')));
    const summaries = () => lines.filter((l) => typeof l.suppressed === 'number');
    // Every refusal is either a line or counted in a summary line (which comes when its second ends).
    await waitUntil(
      'every refusal accounted for',
      () => refusals().length + summaries().reduce((n, l) => n + Number(l.suppressed), 0) === flood,
    );
    assert.ok(summaries().length >= 1);
    assert.ok(refusals().length < flood);
  });
});
