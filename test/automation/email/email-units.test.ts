// The email trigger's pure parts: its settings (and every refused value), sender patterns,
// attachment name confinement and the manifest's alias rule.

import { describe, it } from 'node:test';
import { strict as assert } from 'node:assert';
import { EnvReader, loadCoreSettings, SettingsError } from '../../../src/core/settings/index.js';
import { loadAutomationSettings } from '../../../src/automation/settings.js';
import { ManifestError, parseManifest } from '../../../src/automation/registry/manifest.js';
import { attachmentNames } from '../../../src/automation/triggers/email/names.js';
import { SenderPolicy } from '../../../src/automation/triggers/email/senders.js';

const BASE = {
  AUTOMATION_SMTP_PORT: '2525',
  AUTOMATION_EMAIL_DOMAIN: 'Mail.Example.com',
  AUTOMATION_EMAIL_SENDERS: 'Ann@Example.com, *@partner.example',
  AUTOMATION_SMTP_RELAY: 'smtp://mailer:p%40ss@relay.example:2587?starttls=required',
};

function email(vars: Record<string, string>) {
  const env = new EnvReader(vars);
  return loadAutomationSettings(env, loadCoreSettings(env)).email;
}

describe('email trigger settings', () => {
  it('are off without AUTOMATION_SMTP_PORT', () => {
    assert.equal(email({}), undefined);
  });

  it('read the listener, the senders and the relay', () => {
    const s = email(BASE)!;
    assert.equal(s.port, 2525);
    assert.equal(s.domain, 'mail.example.com');
    assert.deepEqual(s.senders, ['ann@example.com', '*@partner.example']);
    assert.equal(s.from, 'sluice@mail.example.com');
    assert.deepEqual(
      { ...s.relay },
      {
        host: 'relay.example',
        port: 2587,
        secure: false,
        requireTls: true,
        user: 'mailer',
        pass: 'p@ss',
        shown: 'smtp://mailer:***@relay.example:2587?starttls=required',
      },
    );
    const tls = email({ ...BASE, AUTOMATION_SMTP_RELAY: 'smtps://relay.example' })!.relay;
    assert.deepEqual([tls.secure, tls.port, tls.user, tls.requireTls], [true, 465, undefined, false]);
    assert.equal(email({ ...BASE, AUTOMATION_SMTP_RELAY: 'smtp://relay.example' })!.relay.port, 587);
  });

  it('refuse a missing or bad domain, senders or relay, naming the variable', () => {
    const refused: [Record<string, string>, string][] = [
      [{ AUTOMATION_EMAIL_DOMAIN: '' }, 'AUTOMATION_EMAIL_DOMAIN'],
      [{ AUTOMATION_EMAIL_DOMAIN: 'not a domain' }, 'AUTOMATION_EMAIL_DOMAIN'],
      [{ AUTOMATION_EMAIL_SENDERS: '' }, 'AUTOMATION_EMAIL_SENDERS'],
      [{ AUTOMATION_EMAIL_SENDERS: 'ann' }, 'AUTOMATION_EMAIL_SENDERS'],
      [{ AUTOMATION_EMAIL_SENDERS: 'a*@example.com' }, 'AUTOMATION_EMAIL_SENDERS'],
      [{ AUTOMATION_SMTP_RELAY: '' }, 'AUTOMATION_SMTP_RELAY'],
      [{ AUTOMATION_SMTP_RELAY: 'http://relay.example' }, 'AUTOMATION_SMTP_RELAY'],
      [{ AUTOMATION_SMTP_RELAY: 'smtp://relay.example?starttls=maybe' }, 'AUTOMATION_SMTP_RELAY'],
      [{ AUTOMATION_SMTP_RELAY: 'smtp://relay.example?tls=off' }, 'AUTOMATION_SMTP_RELAY'],
      [{ AUTOMATION_SMTP_PORT: '70000' }, 'AUTOMATION_SMTP_PORT'],
      [{ AUTOMATION_EMAIL_MAX_ATTACHMENTS: '-1' }, 'AUTOMATION_EMAIL_MAX_ATTACHMENTS'],
    ];
    for (const [vars, name] of refused)
      assert.throws(
        () => email({ ...BASE, ...vars }),
        (err: unknown) => err instanceof SettingsError && err.message.includes(name),
        JSON.stringify(vars),
      );
    // A relay password never shows in the error.
    assert.throws(
      () => email({ ...BASE, AUTOMATION_SMTP_RELAY: 'ftp://u:hunter2@relay.example' }),
      (err: unknown) => err instanceof Error && !err.message.includes('hunter2'),
    );
  });
});

describe('sender patterns', () => {
  const policy = new SenderPolicy(['ann@example.com', '*@partner.example']);
  it('take listed addresses and any address of a *@domain, without case', () => {
    for (const a of ['ann@example.com', 'ANN@Example.COM', 'bob@partner.example'])
      assert.equal(policy.allows(a), true, a);
  });
  it('refuse the rest, the null sender and look-alike domains', () => {
    for (const a of [
      '',
      'ann',
      'bob@example.com',
      'ann@example.com.evil',
      'bob@sub.partner.example',
      '@partner.example',
    ])
      assert.equal(policy.allows(a), false, a);
  });
});

describe('attachment names', () => {
  it('keep the last path segment without control characters, and tell repeats apart', () => {
    assert.deepEqual(
      attachmentNames([
        '../../x',
        'a\u0000b.txt',
        '/etc/passwd',
        'C:\\dir\\w.txt',
        'x',
        'X',
        'report.pdf',
        'report.pdf',
      ]),
      ['x', 'ab.txt', 'passwd', 'w.txt', 'x (2)', 'X (3)', 'report.pdf', 'report (2).pdf'],
    );
  });
  it('name what is left empty or unsafe attachment-<n>', () => {
    assert.deepEqual(attachmentNames([undefined, '', '..', '../', '\u0001\u0002', ' . ']), [
      'attachment-1',
      'attachment-2',
      'attachment-3',
      'attachment-4',
      'attachment-5',
      'attachment-6',
    ]);
  });
  it('bound a long name, keeping its end (the extension)', () => {
    const [name] = attachmentNames([`${'a'.repeat(500)}.pdf`]);
    assert.equal(name!.length, 200);
    assert.ok(name!.endsWith('.pdf'));
  });
});

describe('manifest email aliases', () => {
  const manifest = (email: unknown) =>
    parseManifest(
      JSON.stringify({ name: 'm', entry: 'index.js', triggers: { email } }),
      'manifest.json',
      'workflow',
      1000,
    );
  it('reads enabled and aliases', () => {
    assert.deepEqual(manifest({ enabled: true, aliases: ['inbox', 'In.Box+eu'] }).triggers.email, {
      enabled: true,
      aliases: ['inbox', 'In.Box+eu'],
    });
    assert.deepEqual(manifest(null).triggers.email, { enabled: false, aliases: [] });
  });
  it('refuses aliases that are not the part before @', () => {
    for (const aliases of [['a@b.c'], ['-x'], [''], ['a b'], [7], 'inbox'])
      assert.throws(
        () => manifest({ enabled: true, aliases }),
        (err: unknown) =>
          err instanceof ManifestError && err.issues.some((i) => i.field === 'triggers.email.aliases'),
        JSON.stringify(aliases),
      );
    assert.throws(() => manifest('inbox'), ManifestError);
  });
});
