// The import boundaries of eslint.config.js, checked through ESLint's own API with the project's
// configuration: the same import is reported outside the module that owns the library and
// accepted inside it. Paths are existing files (type-aware linting needs them in the project);
// lintText lints the given text as if it were that file's content.
import { strict as assert } from 'node:assert';
import { before, describe, it } from 'node:test';
import { ESLint } from 'eslint';

const RULE = '@typescript-eslint/no-restricted-imports';

let eslint: ESLint;

async function reported(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  const messages = result!.messages;
  const fatal = messages.filter((m) => m.fatal);
  assert.deepEqual(fatal, [], `${filePath} must parse`);
  return messages.filter((m) => m.ruleId === RULE).map((m) => m.message);
}

const importing = (module: string): string => `import * as lib from '${module}';\nexport const used = lib;\n`;

// module → a file of the module that owns it (allowed) and one elsewhere in src/ (refused).
// `family`: the BOUNDARIES row when it names a scope (`@nats-io`) rather than the module itself.
const CASES: { module: string; allowed: string; refused: string; family?: string }[] = [
  { module: 'uWebSockets.js', allowed: 'src/core/http/uws.ts', refused: 'src/streams/settings.ts' },
  { module: 'uWebSockets.js', allowed: 'src/core/http/uws.ts', refused: 'src/core/http/node.ts' },
  { module: 'ws', allowed: 'src/core/http/node.ts', refused: 'src/streams/http/push.ts' },
  { module: 'ws', allowed: 'src/core/http/node.ts', refused: 'src/core/http/uws.ts' },
  { module: '@grpc/grpc-js', allowed: 'src/core/grpc/server.ts', refused: 'src/ratelimit/server/grpc.ts' },
  {
    module: 'ioredis',
    allowed: 'src/ratelimit/store/redis-client.ts',
    refused: 'src/ratelimit/store/factory.ts',
  },
  { module: 'lmdb', allowed: 'src/streams/storage.ts', refused: 'src/streams/settings.ts' },
  { module: 'lmdb', allowed: 'src/automation/db.ts', refused: 'src/automation/feature-host.ts' },
  { module: 'pino', allowed: 'src/core/log.ts', refused: 'src/core/http/server.ts' },
  { module: 'prom-client', allowed: 'src/core/observe/metrics.ts', refused: 'src/streams/observe.ts' },
  { module: 'pg', allowed: 'src/automation/pg/pool.ts', refused: 'src/automation/db.ts' },
  {
    module: '@nats-io/jetstream',
    family: '@nats-io',
    allowed: 'src/streams/log/jetstream.ts',
    refused: 'src/streams/log/lmdb.ts',
  },
  {
    module: '@nats-io/transport-node',
    family: '@nats-io',
    allowed: 'src/streams/nats/connection.ts',
    refused: 'src/streams/index.ts',
  },
  {
    module: '@opentelemetry/api',
    family: '@opentelemetry',
    allowed: 'src/core/tracing/index.ts',
    refused: 'src/streams/http/tracing.ts',
  },
  {
    module: 'ajv',
    allowed: 'src/automation/schemas/compiler.ts',
    refused: 'src/automation/registry/manifest.ts',
  },
];

describe('import boundaries (eslint.config.js)', () => {
  before(() => {
    eslint = new ESLint({ cwd: process.cwd() });
  });

  for (const c of CASES) {
    it(`${c.module}: refused in ${c.refused}, accepted in ${c.allowed}`, async () => {
      const refused = await reported(importing(c.module), c.refused);
      assert.equal(refused.length, 1, `expected one report in ${c.refused}`);
      assert.match(
        refused[0]!,
        new RegExp(`${(c.family ?? c.module).replace(/[.]/g, '\\.')} is imported only in`),
      );
      assert.deepEqual(await reported(importing(c.module), c.allowed), []);
    });
  }

  it('also refuses subpath and type-only imports', async () => {
    const sub = await reported(
      `export { status } from '@grpc/grpc-js/build/src/constants';\n`,
      'src/streams/settings.ts',
    );
    assert.equal(sub.length, 1);
    const typeOnly = await reported(
      `import type { Logger } from 'pino';\nexport type L = Logger;\n`,
      'src/streams/settings.ts',
    );
    assert.equal(typeOnly.length, 1);
  });

  it('leaves tests free to import anything', async () => {
    assert.deepEqual(await reported(importing('uWebSockets.js'), 'test/core/errors.test.ts'), []);
    assert.deepEqual(await reported(importing('lmdb'), 'test/core/errors.test.ts'), []);
  });
});
