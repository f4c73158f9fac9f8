// The server driven through the TypeScript client library (src/automation/client), the way
// the reference product's own client code would use it.

import { after, before, describe, it } from 'node:test';
import { strict as assert } from 'node:assert';
import { unzipSync } from 'fflate';
import {
  ServiceClient,
  ClientNotFoundError,
  ClientValidationError,
  ClientAuthError,
  toFile,
} from '../../src/automation/client/index.js';
import { startHarness, type Harness } from './harness.js';

describe('automation server through the client library', () => {
  let h: Harness;
  let client: ServiceClient;
  before(async () => {
    h = await startHarness();
    client = new ServiceClient({ api_key: h.token, base_url: h.url, timeout_seconds: 30 });
  });
  after(async () => {
    await h?.close();
  });

  it('run_and_wait returns a finished run with output; runs.* read it back', async () => {
    const run: any = await client.run_and_wait('workflows.text-report', { text: 'client says hello hello' });
    assert.equal(run.finished, true);
    assert.equal(run.output.words, 4);
    const got: any = await client.runs.get(run.id, { expand: ['usage', 'input'] });
    assert.deepEqual(got.input.args, { text: 'client says hello hello' });
    const events = await client.runs.events(run.id);
    assert.equal(events.events[0]!.type, 'run.created');
    const steps: any = await client.runs.steps(run.id);
    assert.equal(steps.steps.length, 3);
    const zip = await client.runs.artifacts.zip(run.id);
    assert.deepEqual(Object.keys(unzipSync(zip)), ['report.md']);
    const page = await client.runs.list({ limit: 10 });
    assert.ok(page.runs.some((r: any) => r.id === run.id));
  });

  it('sends file values in the input as multipart', async () => {
    const run: any = await client.run_and_wait('agents.echo-agent', {
      text: 'with a file',
      doc: toFile('file body', 'doc.txt', 'text/plain'),
    });
    assert.equal(run.finished, true);
    const full = await client.runs.get(run.id, { expand: 'input' });
    // RunInput.files lists the uploaded files by name (RunFile); the bytes are the run's.
    assert.equal(full.input?.files?.length, 1);
    assert.match(full.input.files[0]!.name, /doc\.txt$/);
  });

  it('automations, files and auth groups; errors map to the spec classes', async () => {
    const list: any = await client.automations.list({ type: 'workflow' });
    assert.deepEqual(
      list.data.map((a: any) => a.slug),
      ['text-report'],
    );
    const sync: any = await client.automations.sync('workflows.text-report');
    assert.equal(sync.release.version, '1.0.0');
    const stored: any = await client.files.upload(toFile('abc', 'abc.txt', 'text/plain'));
    assert.equal(stored.size, 3);
    assert.equal(Buffer.from(await client.files.content(stored.id)).toString(), 'abc');
    const check: any = await client.auth.check();
    assert.equal(check.ok, true);
    await assert.rejects(
      client.runs.get('run_nope'),
      (err: unknown) => err instanceof ClientNotFoundError && typeof (err as any).requestId === 'string',
    );
    await assert.rejects(client.run('workflows.text-report', { nope: 1 }), ClientValidationError);
    const anonymous = new ServiceClient({ api_key: 'wrong', base_url: h.url });
    await assert.rejects(anonymous.automations.list(), ClientAuthError);
  });
});
