// `npm run fuzz -- [options]`: a long fuzz run against services already running on this
// machine (`sluice serve`). Exits 1 on any failure (see docs/fuzz.md), 2 on bad options.
//
//   --requests N          cases to send (default 2000)
//   --seed S              PRNG seed (default 1); the same seed sends the same requests
//   --url-ratelimit URL   default http://127.0.0.1:8080   (\`none\` skips the service)
//   --url-streams URL     default http://127.0.0.1:8082
//   --url-automation URL  default http://127.0.0.1:8083
//   --token T             API key (or SLUICE_FUZZ_TOKEN); without one, a key is made with
//                         `sluice keys create` (same SLUICE_DATA_DIR as the server) and revoked after
//   --concurrency N       requests in flight (default 8)
//   --timeout-ms MS       per request (default 30000)
//   --max-seconds S       whole run (default 600)
//   --ratelimit-domain D  a domain of the loaded rate limit configuration (default fuzz)
//   --big-bodies N        bodies of 64 KiB to 17 MiB to send (default 6)
//   --case I              replay only case I (repeatable) and print request and answer in full

import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { excerpt, formatReport, runFuzz } from './runner.js';
import type { ServiceName } from './routes.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function sluice(args: string[]): string {
  const out = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'src/cli.ts'), ...args], {
    encoding: 'utf8',
    env: process.env,
  });
  if (out.status !== 0) throw new Error(`sluice ${args.join(' ')} failed: ${out.stderr}`);
  return out.stdout;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '2000' },
      seed: { type: 'string', default: '1' },
      'url-ratelimit': { type: 'string', default: 'http://127.0.0.1:8080' },
      'url-streams': { type: 'string', default: 'http://127.0.0.1:8082' },
      'url-automation': { type: 'string', default: 'http://127.0.0.1:8083' },
      token: { type: 'string' },
      concurrency: { type: 'string', default: '8' },
      'timeout-ms': { type: 'string', default: '30000' },
      'max-seconds': { type: 'string', default: '600' },
      'ratelimit-domain': { type: 'string', default: 'fuzz' },
      'big-bodies': { type: 'string', default: '6' },
      case: { type: 'string', multiple: true },
    },
  });
  const int = (name: string, raw: string, min: number): number => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min)
      throw new RangeError(`--${name} must be an integer ≥ ${min}, got ${raw}`);
    return n;
  };
  const urls: Partial<Record<ServiceName, string>> = {};
  for (const service of ['ratelimit', 'streams', 'automation'] as const) {
    const url = values[`url-${service}`];
    if (url !== 'none') urls[service] = url.replace(/\/+$/, '');
  }
  const only = values.case?.map((c) => int('case', c, 0));

  let token = values.token ?? process.env['SLUICE_FUZZ_TOKEN'];
  let createdKey: string | undefined;
  if (!token) {
    const out = sluice(['keys', 'create', '--name', 'fuzz', '--scopes', 'admin']);
    token = /token \(shown once\): (\S+)/.exec(out)?.[1];
    createdKey = (JSON.parse(out.split('\n')[0]!) as { id: string }).id;
    if (!token) throw new Error(`no token in the output of sluice keys create:\n${out}`);
    process.stderr.write(`fuzz: created API key ${createdKey} (revoked at the end)\n`);
  }
  try {
    const report = await runFuzz({
      requests: int('requests', values.requests, 1),
      seed: int('seed', values.seed, 0),
      urls,
      token,
      concurrency: int('concurrency', values.concurrency, 1),
      timeoutMs: int('timeout-ms', values['timeout-ms'], 100),
      maxSeconds: int('max-seconds', values['max-seconds'], 1),
      ratelimitDomain: values['ratelimit-domain'],
      bigBodies: int('big-bodies', values['big-bodies'], 0),
      ...(only ? { only } : {}),
      progress: (line) => process.stderr.write(`fuzz: ${line}\n`),
      ...(only
        ? {
            onCase: (c, outcome) => {
              const request =
                c.raw ??
                Buffer.from(`${c.wire.method} ${c.wire.target}\n${JSON.stringify(c.wire.headers)}\n`);
              process.stdout.write(`case ${c.index} (${c.service} ${c.route}; ${c.notes.join('; ')})\n`);
              process.stdout.write(
                `request: ${excerpt(Buffer.concat([request, c.raw ? Buffer.alloc(0) : (c.wire.body ?? Buffer.alloc(0))]), 4000)}\n`,
              );
              process.stdout.write(
                `answer: ${outcome.kind} ${outcome.status ?? ''} ${JSON.stringify(outcome.headers ?? {})}\n${excerpt(outcome.body, 4000)}\n\n`,
              );
            },
          }
        : {}),
    });
    process.stdout.write(formatReport(report) + '\n');
    return report.failures.length === 0 ? 0 : 1;
  } finally {
    if (createdKey) sluice(['keys', 'revoke', createdKey]);
  }
}

try {
  process.exitCode = await main();
} catch (error) {
  process.stderr.write(`fuzz: ${(error as Error).message}\n`);
  process.exitCode = 2;
}
