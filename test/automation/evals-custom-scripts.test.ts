// AUTOMATION_CUSTOM_SCRIPTS=false: configs with a custom script are refused when stored, and a
// config stored before the switch never gets its script run.
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ServiceClient } from '../../src/automation/client/index.js';
import {
  CUSTOM_SCRIPTS_DISABLED,
  parseEvaluatorConfig,
  scoreRun,
  ScriptPool,
} from '../../src/automation/evals/index.js';
import { startHarness, type Harness } from './harness.js';

const A = 'workflows.text-report';
const WITH_SCRIPT = `evaluators:
  - name: words
    type: javascript
    value: "return output.words === 2"
  - name: has-text
    type: is-json
`;

describe('custom scripts switched off', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sluice-scripts-'));
  let h: Harness | undefined;
  after(async () => {
    await h?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses configs with a script, and does not run one stored before', async () => {
    // Enabled (the default): the config is stored.
    h = await startHarness({}, { dataDir });
    assert.equal(
      (await h.api('PUT', `/automations/${A}/evaluators`, { body: { yaml: WITH_SCRIPT } })).status,
      200,
    );
    await h.close();

    h = await startHarness({ AUTOMATION_CUSTOM_SCRIPTS: 'false' }, { dataDir });
    const refused = await h.api('PUT', `/automations/${A}/evaluators`, { body: { yaml: WITH_SCRIPT } });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.issues[0].field, 'evaluators.0.type');
    assert.match(
      refused.body.issues[0].message,
      /custom scripts are disabled on this server \(AUTOMATION_CUSTOM_SCRIPTS=false\)/,
    );
    // The config stored earlier is still there and still scores its other evaluators.
    assert.equal((await h.api('GET', `/automations/${A}/evaluators`)).body.yaml, WITH_SCRIPT);
    const client = new ServiceClient({ api_key: h.token, base_url: h.url, env: {} });
    const ex = await client.automations.examples.create(A, {
      name: 'two-words',
      input: { text: 'alpha beta' },
    });
    const events: { runId?: string | null }[] = [];
    for await (const e of client.experiments.stream(A, { examples: [ex.id] })) events.push(e);
    const { scores } = await client.runs.scores(events[0]!.runId!);
    const byName = new Map(scores.map((s) => [s.evaluatorName, s]));
    assert.equal(byName.get('words')!.score, 0);
    assert.equal(byName.get('words')!.error, CUSTOM_SCRIPTS_DISABLED);
    assert.equal(byName.get('has-text')!.score, 1);
  });

  it('a pool with scripts off refuses them, and so does the parser when told', async () => {
    const parsed = parseEvaluatorConfig(WITH_SCRIPT);
    assert.ok(parsed.ok);
    const pool = new ScriptPool({ customScripts: false });
    try {
      const run = await scoreRun({ config: parsed.config, output: { words: 2 }, pool });
      assert.equal(run.results[0]!.error, CUSTOM_SCRIPTS_DISABLED);
      assert.equal(run.results[0]!.score, 0);
      assert.equal(pool.running, 0);
    } finally {
      await pool.close();
    }
    const off = parseEvaluatorConfig(WITH_SCRIPT, { customScripts: false });
    assert.deepEqual(off.ok ? [] : off.errors.map((e) => [e.path, e.message]), [
      ['evaluators[0].type', CUSTOM_SCRIPTS_DISABLED],
    ]);
  });
});
