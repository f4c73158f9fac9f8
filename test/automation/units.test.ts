import { describe, it } from 'node:test';
import { strict as assert } from 'node:assert';
import { parseManifest, ManifestError } from '../../src/automation/registry/manifest.js';
import { compareSemver } from '../../src/automation/registry/semver.js';
import { parseAlias, parseTarget } from '../../src/automation/registry/service.js';
import { parseTime, parseEndTime } from '../../src/automation/http/time.js';
import { DownloadTokens } from '../../src/automation/http/tokens.js';
import { decodeCursor, encodeCursor, CursorError } from '../../src/automation/runs/list.js';
import { newRunId, sampleRank } from '../../src/automation/runs/ids.js';
import { safeRelative } from '../../src/automation/executor/runtime/context.js';
import { EchoProvider } from '../../src/automation/executor/runtime/providers.js';
import { checkRouteParams, routeParams } from '../../src/automation/http/ids.js';
import { csvCell, EXPORT_COLUMNS, toCsv, type ExportRow } from '../../src/automation/experiments/export.js';

describe('automation pure modules', () => {
  it('parses manifests in JSON and YAML and reports every bad field', () => {
    const m = parseManifest(
      '{"name":"A","entry":"index.js","timeout":"30s","inputSchema":{"type":"object"}}',
      'manifest.json',
      'workflow',
      1000,
    );
    assert.equal(m.timeoutMs, 30_000);
    assert.equal(m.triggers.api, true);
    const y = parseManifest('name: B\nmodel: openai:x\ntools: [a]\n', 'manifest.yaml', 'agent', 1000);
    assert.equal(y.model, 'openai:x');
    assert.equal(y.timeoutMs, 1000);
    assert.throws(
      () =>
        parseManifest(
          '{"type":"agent","entry":"../x.js","timeout":"soon","inputSchema":{"type":"nope"},"triggers":3}',
          'manifest.json',
          'workflow',
          1,
        ),
      (err: unknown) => {
        assert.ok(err instanceof ManifestError);
        assert.deepEqual(err.issues.map((i) => i.field).sort(), [
          'entry',
          'inputSchema',
          'name',
          'timeout',
          'triggers',
          'type',
        ]);
        return true;
      },
    );
    assert.throws(() => parseManifest('{not json', 'manifest.json', 'workflow', 1), ManifestError);
    assert.throws(() => parseManifest('[1,2]', 'manifest.json', 'workflow', 1), ManifestError);
    assert.throws(
      () => parseManifest('{"name":"x","entry":"i.js","tools":"a"}', 'manifest.json', 'agent', 1),
      ManifestError,
    );
  });

  it('orders versions and parses aliases', () => {
    assert.ok(compareSemver('1.10.0', '1.9.9') > 0);
    assert.equal(compareSemver('2.0.0', '2.0.0'), 0);
    assert.deepEqual(parseAlias('workflows.a-b@1.2.3'), { type: 'workflow', slug: 'a-b', version: '1.2.3' });
    assert.deepEqual(parseAlias('agents.x'), { type: 'agent', slug: 'x', version: undefined });
    assert.equal(parseAlias('tools.x'), null);
    assert.equal(parseAlias('workflows.Bad_Slug'), null);
    assert.equal(parseAlias('aut_123'), null);
    // Run targets: a slug or an automation id after the type prefix, or a bare id.
    assert.deepEqual(parseTarget('workflows.aut_1@1.2.3'), {
      type: 'workflow',
      name: 'aut_1',
      version: '1.2.3',
    });
    assert.deepEqual(parseTarget('agents.x'), { type: 'agent', name: 'x', version: undefined });
    assert.deepEqual(parseTarget('aut_1'), { type: undefined, name: 'aut_1', version: undefined });
    assert.deepEqual(parseTarget('tools.x@main'), { type: undefined, name: 'tools.x', version: 'main' });
  });

  it('parses absolute and relative times', () => {
    const now = Date.parse('2026-01-10T12:00:00Z');
    assert.equal(parseTime('-1d', now), now - 86_400_000);
    assert.equal(parseTime('now-30d', now), now - 30 * 86_400_000);
    assert.equal(parseTime('2h', now), now - 7_200_000);
    assert.equal(parseTime('2026-01-01', now), Date.parse('2026-01-01'));
    assert.equal(parseEndTime('2026-01-01', now), Date.parse('2026-01-02') - 1);
    assert.equal(parseTime('1767225600000', now), 1767225600000);
    assert.equal(parseTime('now', now), now);
    assert.equal(parseTime('soon', now), undefined);
    assert.equal(parseTime('2026-13-45', now), undefined);
  });

  it('signs download tokens bound to run, bundle and expiry', () => {
    const tokens = new DownloadTokens(Buffer.from('secret'), 60_000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    const { token } = tokens.issue('run_a', '', now);
    assert.equal(tokens.verify(token, 'run_a', '', now), 'ok');
    assert.equal(tokens.verify(token, 'run_b', '', now), 'invalid');
    assert.equal(tokens.verify(token, 'run_a', 'review', now), 'invalid');
    assert.equal(tokens.verify(token, 'run_a', '', now + 120_000), 'expired');
    assert.equal(tokens.verify('garbage', 'run_a', '', now), 'invalid');
    assert.equal(new DownloadTokens(Buffer.from('other'), 60_000).verify(token, 'run_a', '', now), 'invalid');
    const review = tokens.issue('run_a', 'review', now).token;
    assert.equal(tokens.verify(review, 'run_a', 'review', now), 'ok');
    assert.equal(tokens.verify(review, 'run_a', '', now), 'invalid');
  });

  it('round-trips cursors and refuses foreign ones', () => {
    assert.deepEqual(decodeCursor(encodeCursor(123, 'run_x')), { sortKey: 123, id: 'run_x' });
    assert.throws(() => decodeCursor('bm9wZQ'), CursorError);
    assert.throws(() => decodeCursor(Buffer.from('["a",1]').toString('base64url')), CursorError);
    // The id goes into an index key: one that is not id-shaped is a foreign cursor too.
    assert.throws(() => decodeCursor(encodeCursor(1, 'x'.repeat(5000))), CursorError);
    assert.throws(() => decodeCursor(encodeCursor(1, '../x')), CursorError);
  });

  it('makes run ids in creation order and a stable sampleRank in [0, 1)', () => {
    const ids = [newRunId(1000), newRunId(1000), newRunId(1001)];
    assert.deepEqual([...ids].sort(), ids);
    for (const id of ids) assert.match(id, /^exec_[0-9a-z]{22}$/);
    // Past several refills of the random pool, the random parts of ids made in the same
    // millisecond stay distinct and well formed.
    const tails = new Set<string>();
    for (let i = 0; i < 3000; i++) tails.add(newRunId(2000).slice(-10));
    assert.equal(tails.size, 3000);
    for (const tail of tails) assert.match(tail, /^[0-9a-f]{10}$/);
    const r = sampleRank('t', 'run_1');
    assert.equal(sampleRank('t', 'run_1'), r);
    assert.notEqual(sampleRank('u', 'run_1'), r);
    let below = 0;
    for (let i = 0; i < 2000; i++) {
      const v = sampleRank('t', `run_${i}`);
      assert.ok(v >= 0 && v < 1);
      if (v < 0.5) below++;
    }
    // A hash spreads evenly: about half below 0.5 (a wide band, so this is not flaky).
    assert.ok(below > 850 && below < 1150);
  });

  it('neutralises spreadsheet formulas in CSV cells and keeps RFC 4180 quoting', async () => {
    // OWASP "CSV Injection": text starting with = + - @ tab or CR gets a leading single quote.
    assert.equal(csvCell('=1+1'), "'=1+1");
    assert.equal(csvCell('+41 22'), "'+41 22");
    assert.equal(csvCell('-2'), "'-2");
    assert.equal(csvCell('@SUM(A1)'), "'@SUM(A1)");
    assert.equal(csvCell('\t=cmd'), "'\t=cmd");
    assert.equal(csvCell('\r=cmd'), `"'\r=cmd"`);
    assert.equal(csvCell('=HYPERLINK("http://x","a,b")'), `"'=HYPERLINK(""http://x"",""a,b"")"`);
    // Plain text, numbers and booleans are unchanged; a formula character later in the text is harmless.
    assert.equal(csvCell('a=b'), 'a=b');
    assert.equal(csvCell(-0.5), '-0.5');
    assert.equal(csvCell(true), 'true');
    assert.equal(csvCell(null), '');
    assert.equal(csvCell('say "hi", then\nleave'), '"say ""hi"", then\nleave"');
    const row = Object.fromEntries(EXPORT_COLUMNS.map((c) => [c, null])) as ExportRow;
    const csv = await toCsv([{ ...row, exampleName: '=2*3', label: '@x', score: 1 }]);
    assert.equal(csv.split('\r\n')[1], ",,'=2*3,,,,1,,'@x,,,");
  });

  it('gives every route parameter a kind, and a route with an unknown one cannot start', () => {
    const params = routeParams('/automations/{id}/examples/{exampleId}/input/{path}');
    assert.deepEqual(
      params.map((p) => [p.name, p.key, p.kind]),
      [
        ['id', 'id', 'id'],
        ['exampleId', 'exampleId', 'id'],
        ['path', '*', 'path'],
      ],
    );
    assert.throws(() => routeParams('/things/{thingId}'), /no kind/);
    assert.equal(routeParams('/things/{thingId}', { thingId: 'id' })[0]!.kind, 'id');
    checkRouteParams(params, { id: 'workflows.a@1.0.0', exampleId: 'ex_1', '*': 'docs/a b.pdf' });
    for (const bad of [
      { id: 'a'.repeat(257), exampleId: 'x', '*': 'p' },
      { id: 'a', exampleId: 'x/y', '*': 'p' },
      { id: 'a', exampleId: 'x', '*': 'docs/../p' },
      { id: 'a', exampleId: 'x', '*': '' },
    ])
      assert.throws(
        () => checkRouteParams(params, bad),
        (e: any) => e.status === 400,
      );
  });

  it('refuses file names that escape the run folder', () => {
    assert.equal(safeRelative('a/b.txt'), 'a/b.txt');
    assert.equal(safeRelative('/abs.txt'), 'abs.txt');
    assert.throws(() => safeRelative('../x'));
    assert.throws(() => safeRelative('a/../../x'));
    assert.throws(() => safeRelative(''));
  });

  it('the echo provider calls each tool once, then answers', async () => {
    const p = new EchoProvider();
    const signal = new AbortController().signal;
    const tools = [
      { name: 't1', description: '', parameters: {} },
      { name: 't2', description: '', parameters: {} },
    ];
    const first = await p.complete({ messages: [{ role: 'user', content: '{"a":1}' }], tools, signal });
    assert.deepEqual(
      first.toolCalls.map((c) => [c.name, c.arguments]),
      [
        ['t1', { a: 1 }],
        ['t2', { a: 1 }],
      ],
    );
    const second = await p.complete({
      messages: [
        { role: 'user', content: '{"a":1}' },
        { role: 'assistant', content: null, toolCalls: first.toolCalls },
        { role: 'tool', toolCallId: 'call_1', name: 't1', content: '5' },
        { role: 'tool', toolCallId: 'call_2', name: 't2', content: 'text' },
      ],
      tools,
      signal,
    });
    assert.deepEqual(JSON.parse(second.content!), { echo: { a: 1 }, tools: { t1: 5, t2: 'text' } });
  });
});
