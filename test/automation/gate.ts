// A workflow that holds its run until the test opens a gate, so a test can see a run that is
// still in flight (or make it finish) by an event of its own instead of by a delay racing the
// machine. The gate is a file: the run's only step waits (cancellably) until it exists.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { strict as assert } from 'node:assert';
import type { Harness } from './harness.js';
import { gitIn, release, workflowManifest } from './registry-git.js';

export const GATED = 'workflows.gated';

const SOURCE = `import { existsSync } from 'node:fs';
export default {
  steps: [
    {
      name: 'wait',
      async run(ctx) {
        while (!existsSync(ctx.input.gate)) await ctx.sleep(10);
        return { text: ctx.input.text };
      },
    },
  ],
  output: (ctx) => ctx.steps.wait,
};
`;

/** Publishes workflows.gated@1.0.0 in the harness's registry. */
export async function installGated(h: Harness): Promise<void> {
  release(h.registryPath, {
    'workflows/gated/manifest.json': workflowManifest('Gated', {
      inputSchema: {
        type: 'object',
        required: ['gate', 'text'],
        properties: { gate: { type: 'string' }, text: { type: 'string' } },
      },
    }),
    'workflows/gated/index.js': SOURCE,
  });
  gitIn(h.registryPath, ['tag', '-a', 'workflows.gated@1.0.0', '-m', 'gated']);
  assert.equal((await h.api('POST', `/automations/${GATED}/sync`)).status, 200);
}

/** A closed gate: pass `path` as the run's `gate` input, call open() to let the run finish. */
export class Gate {
  private readonly dir = mkdtempSync(join(tmpdir(), 'sluice-gate-'));
  readonly path = join(this.dir, 'open');

  open(): void {
    writeFileSync(this.path, '');
  }

  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
