// An experiment of 100 dataset examples with the built-in workflow (workflows.text-report)
// and two evaluators, measured end to end over HTTP: POST …/experiments/stream until the
// 100th NDJSON line. The ceiling is the same 100 runs started straight through POST /runs
// with the same concurrency and awaited, so the ratio is what experiments add (example
// lookup, run bookkeeping, scoring, score commits, streaming). Target: < 5 s per experiment.

import { startAutomation, type RunningAutomation } from '../src/automation/index.js';
import { makeTestContext } from '../test/helpers/context.js';
import type { BenchFile, BenchSuite } from './types.js';

const EXAMPLES = 100;
const CONCURRENCY = 8;
const A = 'workflows.text-report';

function experimentSuite(): BenchSuite {
  let service: RunningAutomation;
  let cleanup: (() => Promise<void>) | undefined;
  let token = '';
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${service.url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res;
  };
  return {
    name: `automation experiment of ${EXAMPLES} examples, built-in workflow`,
    description: `POST /automations/{id}/experiments/stream (batchConcurrency ${CONCURRENCY}, 2 evaluators) until the last NDJSON line vs ${EXAMPLES} POST /runs?wait_for_completion at the same concurrency`,
    ceiling: `${EXAMPLES} runs via POST /runs (no experiment)`,
    setup: async () => {
      const t = await makeTestContext({
        env: { AUTOMATION_POOL_THREADS: '2' },
      });
      cleanup = () => t.cleanup();
      token = t.token;
      service = await startAutomation(t.ctx);
      await call('PUT', `/automations/${A}/evaluators`, {
        yaml: 'evaluators:\n  - name: counts\n    type: exact-diff\n    config: { paths: [words] }\n  - name: text\n    type: equals\n    path: /text\n',
      });
      for (let i = 0; i < EXAMPLES; i++)
        await call('POST', `/automations/${A}/examples`, {
          name: `e${i}`,
          input: { text: `example ${i} of the bench` },
          expected: { text: `example ${i} of the bench`, words: 5 },
        });
    },
    teardown: async () => {
      await service.close();
      await cleanup?.();
    },
    tasks: {
      [`${EXAMPLES} runs via POST /runs (no experiment)`]: async () => {
        let next = 0;
        const lane = async () => {
          while (next < EXAMPLES) {
            const i = next++;
            const res = await call('POST', '/runs?wait_for_completion=30', {
              target: A,
              input: { text: `example ${i} of the bench` },
            });
            const run = (await res.json()) as { execution?: { status?: string } };
            if (run.execution?.status !== 'completed')
              throw new Error(`run did not complete: ${JSON.stringify(run)}`);
          }
        };
        await Promise.all(Array.from({ length: CONCURRENCY }, lane));
      },
      [`experiment, ${EXAMPLES} examples (stream to the last line)`]: async () => {
        const res = await call('POST', `/automations/${A}/experiments/stream`, {
          batchConcurrency: CONCURRENCY,
        });
        const text = await res.text();
        const lines = text.split('\n').filter(Boolean);
        if (lines.length !== EXAMPLES) throw new Error(`expected ${EXAMPLES} lines, got ${lines.length}`);
        const failed = lines.filter((l) => !(JSON.parse(l) as { passed: boolean }).passed).length;
        if (failed > 0) throw new Error(`${failed} runs did not pass`);
      },
    },
  };
}

const file: BenchFile = () => [experimentSuite()];
export default file;
