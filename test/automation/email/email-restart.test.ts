// A reply survives a restart: the message's entry in the store says its run's reply is still
// owed, so the service started again on the same data directory sends it once the run ends. On
// one node a run cut off by the stop ends failed at the next start (runs/service.ts recover), and
// the reply says so.

import { after, describe, it } from 'node:test';
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHarness, type Harness } from '../harness.js';
import { gitIn, release, workflowManifest } from '../registry-git.js';
import { deliver, mimeMessage, startSink, type SmtpSink } from '../../helpers/smtp.js';
import { waitUntil } from '../../helpers/wait.js';

// The run waits until the file its mail's subject names exists.
const HELD = `import { existsSync } from 'node:fs';
export default { steps: [{ name: 'wait', async run(ctx) {
  while (!existsSync(ctx.input.email.subject)) await ctx.sleep(10);
  return { released: true };
} }] };\n`;

describe('email replies across a restart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-email-restart-'));
  const dataDir = join(dir, 'data');
  const gate = join(dir, 'gate');
  let sink: SmtpSink | undefined;
  let h: Harness | undefined;
  after(async () => {
    writeFileSync(gate, '');
    await h?.close();
    await sink?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends the reply of a run that ended after the service started again', async () => {
    sink = await startSink();
    const env = {
      AUTOMATION_SMTP_PORT: '0',
      AUTOMATION_EMAIL_DOMAIN: 'mail.test',
      AUTOMATION_EMAIL_SENDERS: 'alice@example.com',
      AUTOMATION_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}`,
    };
    h = await startHarness(env, { dataDir });
    release(h.registryPath, {
      'workflows/held/manifest.json': workflowManifest('Held', {
        triggers: { email: { enabled: true, aliases: ['held'] } },
      }),
      'workflows/held/index.js': HELD,
    });
    gitIn(h.registryPath, ['tag', '-a', 'workflows.held@1.0.0', '-m', 'x']);
    assert.equal((await h.api('POST', '/automations/workflows.held/sync')).status, 200);

    const id = '<restart@example.com>';
    const sent = await deliver(
      h.service.smtpPort!,
      'alice@example.com',
      ['held@mail.test'],
      mimeMessage({ messageId: id, subject: gate }),
    );
    assert.equal(sent.data?.code, 250, JSON.stringify(sent.data));
    const first = h;
    const run = await waitUntil('the run to start', async () => {
      const runs = (await first.api('GET', '/runs?trigger=email')).body.runs as {
        id: string;
        execution: { status: string };
      }[];
      return runs[0]?.execution.status === 'running' && runs[0];
    });
    await first.service.close();
    h = undefined;
    assert.equal(sink.mails.length, 0);

    h = await startHarness(env, { dataDir });
    const reply = await waitUntil('the reply', () => sink!.mails.find((m) => m.parsed.inReplyTo === id));
    assert.match(reply.parsed.text ?? '', new RegExp(`Run ${run.id} of held 1\\.0\\.0: failed`));
    assert.match(reply.parsed.text ?? '', /the service stopped while the run was in flight/);
    const second = h;
    const types = await waitUntil('the sent event', async () => {
      const t = ((await second.api('GET', `/runs/${run.id}/events`)).body.events as { type: string }[]).map(
        (e) => e.type,
      );
      return t.includes('email.reply.sent') && t;
    });
    assert.equal(types.filter((t) => t === 'email.reply.sent').length, 1);
    assert.equal(
      (
        await h.service.core.stores.emailMessages.get(
          (await h.api('GET', `/runs/${run.id}`)).body.source.id,
          id,
        )
      )?.state,
      'replied',
    );
  });
});
