// The email trigger end to end on LMDB: mail spoken over real SMTP to the service's listener
// starts runs, and their replies reach a sink SMTP server standing in for the relay. Hostile
// mail is refused at the command that shows it, or confined, and nothing lands outside a run's
// folder.

import { after, before, describe, it } from 'node:test';
import { strict as assert } from 'node:assert';
import { readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { unzipSync } from 'fflate';
import type { KeyStore } from '../../../src/core/auth/index.js';
import { startHarness, type Harness } from '../harness.js';
import { release, gitIn, workflowManifest } from '../registry-git.js';
import { deliver, mimeMessage, SmtpClient, startSink, type SmtpSink } from '../../helpers/smtp.js';
import { waitUntil } from '../../helpers/wait.js';

const DOMAIN = 'mail.test';
const PUBLIC = 'https://sluice.example';

const MAIL_ECHO = `export default { steps: [{ name: 'read', async run(ctx) {
  const names = ctx.files.input.map((f) => f.name).sort();
  await ctx.files.write('summary.txt', 'files: ' + names.join(','), 'text/plain');
  return { subject: ctx.input.email.subject, from: ctx.input.email.from, files: names };
} }] };\n`;

function emailManifest(name: string, aliases: string[], enabled = true, extra: Record<string, unknown> = {}) {
  return workflowManifest(name, { triggers: { email: { enabled, aliases } }, ...extra });
}

describe('email trigger', () => {
  let h: Harness;
  let sink: SmtpSink;
  let port: number;

  before(async () => {
    sink = await startSink();
    h = await startHarness({
      AUTOMATION_SMTP_PORT: '0',
      AUTOMATION_EMAIL_DOMAIN: DOMAIN,
      AUTOMATION_EMAIL_SENDERS: 'alice@example.com,*@trusted.test',
      AUTOMATION_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}`,
      AUTOMATION_EMAIL_MAX_BYTES: '64KiB',
      AUTOMATION_EMAIL_MAX_ATTACHMENTS: '5',
      AUTOMATION_EMAIL_MAX_RECIPIENTS: '4',
      AUTOMATION_EMAIL_REPLY_BACKOFF: '10ms',
      AUTOMATION_EMAIL_REPLY_ATTEMPTS: '4',
      AUTOMATION_PUBLIC_URL: PUBLIC,
    });
    port = h.service.smtpPort!;
    release(h.registryPath, {
      'workflows/mail-echo/manifest.json': emailManifest('Mail echo', ['inbox', 'Second.Box']),
      'workflows/mail-echo/index.js': MAIL_ECHO,
      'workflows/strict/manifest.json': emailManifest('Strict', ['strict'], true, {
        inputSchema: { type: 'object', required: ['invoice'] },
      }),
      'workflows/strict/index.js': MAIL_ECHO,
      'workflows/quiet/manifest.json': emailManifest('Quiet', ['quiet'], false),
      'workflows/quiet/index.js': MAIL_ECHO,
    });
    for (const slug of ['mail-echo', 'strict', 'quiet']) {
      gitIn(h.registryPath, ['tag', '-a', `workflows.${slug}@1.0.0`, '-m', 'x']);
      assert.equal((await h.api('POST', `/automations/workflows.${slug}/sync`)).status, 200);
    }
  });
  after(async () => {
    await h?.close();
    await sink?.close();
  });

  const send = (from: string, to: string[], body: string | Buffer) => deliver(port, from, to, body);

  const emailRuns = async () => (await h.api('GET', '/runs?trigger=email&limit=500')).body.runs as any[];
  /** The run's event types, as GET /runs/{id}/events lists them. */
  const eventTypes = async (id: string) =>
    ((await h.api('GET', `/runs/${id}/events`)).body.events as { type: string }[]).map((e) => e.type);

  /** The reply the sink got to the message `id`. */
  const replyTo = (id: string) =>
    waitUntil(`the reply to ${id}`, () => sink.mails.find((m) => m.parsed.inReplyTo === id));

  /** The run (with its input) the message `id` started; `ended`: once it has ended. */
  const runOf = (id: string, ended: boolean) =>
    waitUntil(`the run of ${id}`, async () => {
      for (const r of await emailRuns()) {
        const d = (await h.api('GET', `/runs/${r.id}?expand=input`)).body;
        if (d.input.args.email.messageId === id && (!ended || d.finished)) return d;
      }
      return undefined;
    });

  /** Every file under the data directory named `name` (a confined name must not appear outside a run's input folder). */
  function filesNamed(name: string): string[] {
    const out: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir)) {
        const p = join(dir, e);
        if (statSync(p).isDirectory()) walk(p);
        else if (e === name) out.push(relative(h.dataDir, p));
      }
    };
    walk(h.dataDir);
    return out;
  }

  it('starts a run from an accepted message and replies with status, output and a ZIP link', async () => {
    const id = '<first-run@example.com>';
    const sent = await send(
      'alice@example.com',
      [`inbox@${DOMAIN}`],
      mimeMessage({
        messageId: id,
        subject: 'invoice 42',
        attachments: [
          { disposition: 'filename="a.txt"', body: 'alpha' },
          { disposition: 'filename="b.txt"', body: 'beta' },
        ],
      }),
    );
    assert.equal(sent.mail?.code, 250);
    assert.equal(sent.rcpts[0]?.code, 250);
    assert.equal(sent.data?.code, 250, JSON.stringify(sent.data));
    const [listed] = await waitUntil('the run', async () => {
      const runs = await emailRuns();
      return runs.length === 1 && runs;
    });
    const run = await waitUntil('the run to end', async () => {
      const r = (await h.api('GET', `/runs/${listed.id}?expand=input`)).body;
      return r.finished && r;
    });
    assert.equal(run.execution.status, 'completed', JSON.stringify(run));
    assert.deepEqual(run.trigger, {
      type: 'email',
      by: { id: 'alice@example.com', name: null, email: 'alice@example.com' },
    });
    assert.deepEqual(run.output, {
      subject: 'invoice 42',
      from: 'alice@example.com',
      files: ['attachments/a.txt', 'attachments/b.txt'],
    });
    // The run is the tenant's whose key synced the automation: another tenant's key sees a 404.
    const other = await (h.ctx.ctx.auth as KeyStore).create({
      tenant: 'other',
      user: 'o',
      scopes: ['automation'],
    });
    assert.equal((await h.api('GET', `/runs/${run.id}`, { token: other.token })).status, 404);
    const email = run.input.args.email;
    assert.equal(email.messageId, id);
    assert.equal(email.to, `inbox@${DOMAIN}`);
    assert.equal(email.text.trim(), 'body text');
    assert.equal(email.date, '2026-11-27T06:00:00.000Z');

    const reply = await replyTo(id);
    assert.deepEqual(reply.to, ['alice@example.com']);
    assert.equal(reply.parsed.subject, 'Re: invoice 42');
    const text = reply.parsed.text ?? '';
    assert.match(text, new RegExp(`Run ${run.id} of mail-echo 1\\.0\\.0: completed`));
    assert.match(text, /"subject": "invoice 42"/);
    const link = /https:\/\/sluice\.example(\/api\/v1\/runs\/\S+)/.exec(text);
    assert.ok(link, text);
    // The link opens the ZIP without a key.
    const zip = await fetch(h.url + link[1]);
    assert.equal(zip.status, 200);
    const entries = unzipSync(new Uint8Array(await zip.arrayBuffer()));
    assert.equal(
      Buffer.from(entries['summary.txt']!).toString(),
      'files: attachments/a.txt,attachments/b.txt',
    );
    await waitUntil('the sent event', async () => {
      const all = await eventTypes(run.id);
      return all.includes('email.reply.sent');
    });
  });

  it('starts one run for a Message-ID delivered twice', async () => {
    const before = (await emailRuns()).length;
    const body = mimeMessage({ messageId: '<twice@example.com>', subject: 'twice' });
    assert.equal((await send('alice@example.com', [`inbox@${DOMAIN}`], body)).data?.code, 250);
    assert.equal((await send('bob@trusted.test', [`second.box@${DOMAIN}`], body)).data?.code, 250);
    const runs = await emailRuns();
    assert.equal(runs.length, before + 1);
    // The store names the run (its reply may be owed or taken on by now).
    const entry = await h.service.core.stores.emailMessages.get(runs[0].source.id, '<twice@example.com>');
    assert.equal(entry?.runId, runs[0].id);
  });

  it('refuses an unlisted sender at MAIL FROM, and the null sender', async () => {
    for (const from of ['mallory@example.com', 'alice@example.com.evil', '']) {
      const c = await SmtpClient.open(port);
      await c.command('EHLO client.test');
      const r = await c.command(`MAIL FROM:<${from}>`);
      assert.equal(r?.code, 550, `${from}: ${JSON.stringify(r)}`);
      await c.quit();
    }
  });

  it('refuses unknown aliases, other domains (no relaying) and aliases of automations without email at RCPT', async () => {
    const c = await SmtpClient.open(port);
    await c.command('EHLO client.test');
    assert.equal((await c.command('MAIL FROM:<alice@example.com>'))?.code, 250);
    // Three refusals: the fourth would close the connection (AUTOMATION_EMAIL_MAX_RECIPIENTS).
    for (const to of [`nobody@${DOMAIN}`, 'inbox@elsewhere.test', `quiet@${DOMAIN}`])
      assert.equal((await c.command(`RCPT TO:<${to}>`))?.code, 550, to);
    assert.equal((await c.command(`RCPT TO:<INBOX@${DOMAIN.toUpperCase()}>`))?.code, 250);
    await c.quit();
    const d = await SmtpClient.open(port);
    await d.command('EHLO client.test');
    await d.command('MAIL FROM:<alice@example.com>');
    assert.equal((await d.command(`RCPT TO:<inbox@sub.${DOMAIN}>`))?.code, 550);
    await d.quit();
  });

  it('refuses a message over the size limit with 552, at MAIL FROM when it declares its SIZE', async () => {
    const before = (await emailRuns()).length;
    const big = mimeMessage({ text: 'x'.repeat(70 * 1024) });
    const sent = await send('alice@example.com', [`inbox@${DOMAIN}`], big);
    assert.equal(sent.data?.code, 552, JSON.stringify(sent.data));
    const c = await SmtpClient.open(port);
    await c.command('EHLO client.test');
    assert.equal((await c.command(`MAIL FROM:<alice@example.com> SIZE=${1024 * 1024}`))?.code, 552);
    await c.quit();
    assert.equal((await emailRuns()).length, before);
  });

  it('refuses thousands of attachments with 552 and keeps none of them', async () => {
    const before = (await emailRuns()).length;
    const attachments = Array.from({ length: 3000 }, (_, i) => ({
      disposition: `filename="f${i}.txt"`,
      body: '',
    }));
    // Small parts so the count, not the size, is what is over the limit.
    const body = mimeMessage({ attachments }).replace(/Content-Transfer-Encoding: base64\r\n/g, '');
    assert.ok(Buffer.byteLength(body) < 1024 * 1024);
    const sent = await send('alice@example.com', [`inbox@${DOMAIN}`], body);
    assert.ok(sent.data?.code === 552, JSON.stringify(sent.data));
    assert.equal((await emailRuns()).length, before);
    assert.deepEqual(readdirSync(join(h.dataDir, 'automation', 'tmp')), []);
  });

  it('confines attachment names: ../../x, a NUL, a path and a repeated name', async () => {
    const id = '<names@example.com>';
    const sent = await send(
      'alice@example.com',
      [`inbox@${DOMAIN}`],
      mimeMessage({
        messageId: id,
        attachments: [
          { disposition: 'filename="../../x"', body: 'climb' },
          { disposition: "filename*=utf-8''nul%00byte.txt", body: 'nul' },
          { disposition: 'filename="/etc/passwd"', body: 'abs' },
          { disposition: 'filename="..\\\\..\\\\win.txt"', body: 'win' },
          { disposition: 'filename="x"', body: 'again' },
        ],
      }),
    );
    assert.equal(sent.data?.code, 250, JSON.stringify(sent.data));
    const run = await runOf(id, true);
    const names = run.input.files.map((f: any) => f.name).sort();
    assert.deepEqual(names, [
      'attachments/nulbyte.txt',
      'attachments/passwd',
      'attachments/win.txt',
      'attachments/x',
      'attachments/x (2)',
    ]);
    // `x` exists only as the run's input file; nothing climbed out of the run's folder.
    for (const p of filesNamed('x')) assert.ok(p.startsWith(join('automation', 'runs') + sep), p);
    assert.ok(filesNamed('x').every((p) => p.split(sep).includes('attachments')));
  });

  it('takes non-UTF-8 header bytes without failing', async () => {
    const id = '<latin1@example.com>';
    const raw = Buffer.from(mimeMessage({ messageId: id, subject: 'caf\u00e9 r\u00e9sum\u00e9' }), 'latin1');
    const sent = await send('alice@example.com', [`inbox@${DOMAIN}`], raw);
    assert.equal(sent.data?.code, 250, JSON.stringify(sent.data));
    const run = await runOf(id, false);
    assert.equal(typeof run.input.args.email.subject, 'string');
  });

  it('refuses a message without a Message-ID', async () => {
    const before = (await emailRuns()).length;
    const sent = await send('alice@example.com', [`inbox@${DOMAIN}`], mimeMessage({ messageId: null }));
    assert.equal(sent.data?.code, 550);
    assert.match(sent.data.text, /Message-ID/);
    assert.equal((await emailRuns()).length, before);
  });

  it('survives a pipelined flood of RCPTs: bounded recipients, then the connection is closed', async () => {
    const c = await SmtpClient.open(port);
    await c.command('EHLO client.test');
    const lines = ['MAIL FROM:<alice@example.com>'];
    for (let i = 0; i < 3000; i++) lines.push(`RCPT TO:<nobody-${i}@${DOMAIN}>`);
    const replies = await c.pipeline(lines);
    await c.closed;
    assert.equal(replies[0]?.code, 250);
    const codes = replies.slice(1).map((r) => r.code);
    assert.deepEqual(codes.slice(0, 4), [550, 550, 550, 550]);
    assert.equal(codes[4], 421);
    assert.ok(codes.length <= 6, `${codes.length} replies`);
    // Valid recipients past the limit get 452.
    const d = await SmtpClient.open(port);
    await d.command('EHLO client.test');
    const ok = await d.pipeline([
      'MAIL FROM:<alice@example.com>',
      `RCPT TO:<inbox@${DOMAIN}>`,
      `RCPT TO:<second.box@${DOMAIN}>`,
      `RCPT TO:<strict@${DOMAIN}>`,
      `RCPT TO:<INBOX2@${DOMAIN}>`,
    ]);
    assert.deepEqual(
      ok.map((r) => r.code),
      [250, 250, 250, 250, 550],
    );
    await d.quit();
  });

  it('replies saying why when the input schema refuses the message', async () => {
    const id = '<strict@example.com>';
    const before = (await emailRuns()).length;
    const sent = await send(
      'alice@example.com',
      [`strict@${DOMAIN}`],
      mimeMessage({ messageId: id, subject: 'no invoice' }),
    );
    assert.equal(sent.data?.code, 250);
    const reply = await replyTo(id);
    assert.match(reply.parsed.text ?? '', /did not start a run of strict/);
    assert.match(reply.parsed.text ?? '', /invoice/);
    assert.equal((await emailRuns()).length, before);
  });

  it('retries a reply the relay refuses, recording each failure as a run event', async () => {
    const id = '<retry@example.com>';
    sink.refuseNext(2);
    const sent = await send(
      'bob@trusted.test',
      [`inbox@${DOMAIN}`],
      mimeMessage({ messageId: id, from: 'bob@trusted.test' }),
    );
    assert.equal(sent.data?.code, 250);
    const reply = await replyTo(id);
    assert.deepEqual(reply.to, ['bob@trusted.test']);
    assert.equal(sink.refusedCount, 2);
    const run = (await emailRuns()).find((r: any) => r.trigger.by?.id === 'bob@trusted.test' && r.finished);
    assert.ok(run);
    const types = await waitUntil('the sent event', async () => {
      const t = await eventTypes(run.id);
      return t.includes('email.reply.sent') && t;
    });
    assert.deepEqual(
      types.filter((t) => t.startsWith('email.')),
      ['email.reply.failed', 'email.reply.failed', 'email.reply.sent'],
    );
  });

  it('counts messages and replies in the metrics', async () => {
    const res = await fetch(h.url + '/metrics');
    const text = await res.text();
    assert.match(text, /sluice_automation_email_messages_total\{outcome="accepted"\} \d+/);
    assert.match(text, /sluice_automation_email_messages_total\{outcome="refused_sender"\} [1-9]/);
    assert.match(text, /sluice_automation_email_replies_total\{result="sent"\} [1-9]/);
    assert.match(text, /sluice_automation_email_replies_total\{result="failed"\} [1-9]/);
  });
});
