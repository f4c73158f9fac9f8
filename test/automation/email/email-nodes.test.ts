// The email trigger on two nodes sharing one PostgreSQL: both listen for mail, and one message
// delivered to both at once (two MX hosts, a sender's retry to the other) starts one run, whose
// reply the sink gets once. The Message-ID claim is the store's, so the nodes agree through the
// database alone.

import { after, before, describe, it } from 'node:test';
import { strict as assert } from 'node:assert';
import { postgresSkip } from '../../helpers/postgres.js';
import { deliver, mimeMessage, startSink, type SmtpSink } from '../../helpers/smtp.js';
import { waitUntil } from '../../helpers/wait.js';
import { api, openCluster, registryRemote, type Cluster, type Node } from '../pg/nodes.js';
import { workflowManifest } from '../registry-git.js';

const ECHO = `export default { steps: [{ name: 'echo', async run(ctx) {
  return { subject: ctx.input.email.subject };
} }] };\n`;

describe('the email trigger on two nodes of one PostgreSQL', { skip: postgresSkip }, () => {
  let cluster: Cluster;
  let sink: SmtpSink;
  let a: Node;
  let b: Node;

  before(async () => {
    sink = await startSink();
    cluster = await openCluster('sluice-pg-email-');
    const remote = registryRemote(cluster.dir, {
      'workflows.mailbox': {
        'workflows/mailbox/manifest.json': workflowManifest('Mailbox', {
          triggers: { email: { enabled: true, aliases: ['inbox'] } },
        }),
        'workflows/mailbox/index.js': ECHO,
      },
    });
    const env = {
      AUTOMATION_REGISTRY_URL: remote,
      AUTOMATION_SEED_BUILTINS: 'false',
      AUTOMATION_SMTP_PORT: '0',
      AUTOMATION_EMAIL_DOMAIN: 'mail.test',
      AUTOMATION_EMAIL_SENDERS: 'alice@example.com',
      AUTOMATION_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}`,
    };
    a = cluster.node('a', env);
    b = cluster.node('b', env);
    await Promise.all([a.start(), b.start()]);
    const synced = await api(a, 'POST', '/automations/workflows.mailbox/sync');
    assert.equal(synced.status, 200, JSON.stringify(synced.body));
  });

  after(async () => {
    await cluster?.close();
    await sink?.close();
  });

  const emailRuns = async () =>
    (await api(a, 'GET', '/runs?trigger=email&limit=100')).body.runs as { id: string; finished: boolean }[];

  it('starts one run for a message delivered to both nodes at once, and replies once', async () => {
    const id = '<both-nodes@example.com>';
    const body = mimeMessage({ messageId: id, subject: 'twice over' });
    const sent = await Promise.all(
      [a, b].map((n) => deliver(n.smtpPort!, 'alice@example.com', ['inbox@mail.test'], body)),
    );
    for (const s of sent) assert.equal(s.data?.code, 250, JSON.stringify(s.data));
    const runs = await emailRuns();
    assert.equal(runs.length, 1);
    // The reply comes once the run ended; the same message again starts nothing on either node.
    await waitUntil('the reply', () => sink.mails.find((m) => m.parsed.inReplyTo === id));
    for (const n of [b, a])
      assert.equal(
        (await deliver(n.smtpPort!, 'alice@example.com', ['inbox@mail.test'], body)).data?.code,
        250,
      );
    assert.equal((await emailRuns()).length, 1);
    const run = (await api(a, 'GET', `/runs/${runs[0]!.id}`)).body;
    assert.deepEqual(run.output, { subject: 'twice over' });
    assert.equal(sink.mails.filter((m) => m.parsed.inReplyTo === id).length, 1);
  });
});
