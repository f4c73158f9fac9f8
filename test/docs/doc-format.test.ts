// The doc test's reading of pages and its comparison of answers: what is run, what is skipped,
// what an expected output matches and what it refuses.
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { DocFormatError, quotedFiles, shellBlocks } from './blocks.js';
import { jsonDifference, jsonValues, outputDifference } from './expect.js';
import { toDocumentedPorts, toTestPorts } from './run-page.js';

const fence = '```';

describe('reading a page', () => {
  it('runs sh/bash blocks, skips marked ones with their reason, and pairs expected outputs', () => {
    const page = [
      '# T',
      `${fence}sh`,
      'echo one',
      fence,
      '<!-- doc-test: expect -->',
      `${fence}json`,
      '{"a": 1}',
      fence,
      '<!-- doc-test: skip (needs root) -->',
      '',
      `${fence}bash`,
      'sudo true',
      fence,
      `${fence}json`,
      '{"not": "checked"}',
      fence,
      '- a list item:',
      `   ${fence}sh`,
      '   echo indented',
      `   ${fence}`,
      `${fence}js`,
      'ignored()',
      fence,
    ].join('\n');
    const blocks = shellBlocks(page, 'p.md');
    assert.equal(blocks.length, 3);
    assert.deepEqual(
      blocks.map((b) => [b.line, b.code, b.skip, b.expect?.text]),
      [
        [2, 'echo one', undefined, '{"a": 1}'],
        [11, 'sudo true', 'needs root', undefined],
        [18, 'echo indented', undefined, undefined],
      ],
    );
  });

  it('an "instead NAME=postgres" block is run as NAME set to the test\'s own database', () => {
    const page = [
      '<!-- doc-test: instead DB=postgres -->',
      `${fence}sh`,
      'DB=postgres://u:p@db.internal/x',
      fence,
      '<!-- doc-test: instead DB=mysql -->',
      `${fence}sh`,
      'DB=mysql://x',
      fence,
    ].join('\n');
    assert.throws(() => shellBlocks(page, 'p.md'), /p\.md:5: a shell block takes only/);
    const [block] = shellBlocks(page.split('\n').slice(0, 4).join('\n'), 'p.md');
    assert.deepEqual(block?.instead, { name: 'DB', service: 'postgres' });
    assert.equal(block?.skip, undefined);
  });

  it('refuses a skip without a reason, a stray directive, and an expectation without a block to run', () => {
    assert.throws(
      () => shellBlocks(`<!-- doc-test: skip -->\n${fence}sh\nx\n${fence}\n`, 'p.md'),
      DocFormatError,
    );
    assert.throws(() => shellBlocks('<!-- doc-test: skip (r) -->\ntext\n', 'p.md'), DocFormatError);
    assert.throws(
      () => shellBlocks(`<!-- doc-test: expect -->\n${fence}json\n{}\n${fence}\n`, 'p.md'),
      DocFormatError,
    );
    assert.throws(
      () => shellBlocks(`<!-- doc-test: maybe -->\n${fence}json\n{}\n${fence}\n`, 'p.md'),
      DocFormatError,
    );
    assert.throws(() => shellBlocks(`${fence}sh\nnever closed\n`, 'p.md'), DocFormatError);
  });

  it('finds blocks that quote a repository file', () => {
    const quoted = quotedFiles(`<!-- doc-test: file a/b.js -->\n${fence}js\nexport {};\n${fence}\n`, 'p.md');
    assert.deepEqual(quoted, [{ line: 2, path: 'a/b.js', text: 'export {};' }]);
  });
});

describe('comparing answers', () => {
  it('reads curl answers in a row as separate JSON values', () => {
    assert.deepEqual(jsonValues('{"a":"}{"}["x"]\n400 "s" true'), [{ a: '}{' }, ['x'], 400, 's', true]);
    assert.throws(() => jsonValues('{"a":1} oops'));
  });

  it('matches placeholders and wildcards', () => {
    assert.equal(
      jsonDifference({ id: '<id>', at: '...', n: 1 }, { id: 'x', at: { deep: 1 }, n: 1 }),
      undefined,
    );
    assert.equal(jsonDifference({ id: 'exec_...', t: '<n>s' }, { id: 'exec_123', t: '58s' }), undefined);
    assert.equal(jsonDifference([1, '...'], [1, 2, 3]), undefined);
    assert.equal(jsonDifference({ a: 1, '...': '...' }, { a: 1, b: 2 }), undefined);
  });

  it('reports what differs', () => {
    assert.match(jsonDifference({ a: 1 }, { a: 2 }) ?? '', /\$\.a: expected 1, got 2/);
    assert.match(jsonDifference({ a: 1 }, { a: 1, b: 2 }) ?? '', /unexpected key/);
    assert.match(jsonDifference({ a: 1, b: 2 }, { a: 1 }) ?? '', /missing key "b"/);
    assert.match(jsonDifference([1], [1, 2]) ?? '', /expected 1 element/);
    assert.match(jsonDifference({ id: 'exec_...' }, { id: 'run_1' }) ?? '', /exec_/);
    assert.match(jsonDifference('<id>s', 5) ?? '', /expected/);
    assert.match(outputDifference('json', '{"a":1}', '{"a":1}{"b":2}') ?? '', /expected 1 JSON value/);
    assert.match(outputDifference('json', '{"a":1}', 'not json') ?? '', /not JSON/);
    assert.equal(outputDifference('text', 'line ...\n200', 'line one  \n200\n'), undefined);
    assert.ok(outputDifference('text', '200', '204'));
  });

  it('moves the documented ports to the test server and back', () => {
    const ports = {
      PORT: 40000,
      GRPC_PORT: 40001,
      STREAMS_PORT: 40002,
      AUTOMATION_PORT: 40003,
      DEBUG_PORT: 40004,
    };
    const code = 'curl localhost:8082/x http://127.0.0.1:8083/y localhost:80820 -dial_string localhost:8081';
    const moved = toTestPorts(code, ports);
    assert.equal(
      moved,
      'curl localhost:40002/x http://127.0.0.1:40003/y localhost:80820 -dial_string localhost:40001',
    );
    assert.equal(toDocumentedPorts(moved, ports), code);
  });
});
