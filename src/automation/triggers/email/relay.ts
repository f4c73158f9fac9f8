// Sending replies through the operator's relay (the only module that imports nodemailer):
// AUTOMATION_SMTP_RELAY, with its login and STARTTLS as settings.ts read them. One transport
// for the service; each send is one SMTP transaction.

import nodemailer from 'nodemailer';
import type { RelaySettings } from '../../settings.js';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  /** The Message-ID the mail answers (In-Reply-To and References). */
  inReplyTo: string | undefined;
}

export interface Relay {
  /** Resolves with the sent mail's Message-ID; rejects when the relay refused or was unreachable. */
  send(mail: OutgoingMail): Promise<string>;
  close(): void;
}

export function createRelay(settings: RelaySettings, from: string): Relay {
  const transport = nodemailer.createTransport({
    host: settings.host,
    port: settings.port,
    secure: settings.secure,
    requireTLS: settings.requireTls,
    ...(settings.user !== undefined ? { auth: { user: settings.user, pass: settings.pass ?? '' } } : {}),
    connectionTimeout: 30_000,
    greetingTimeout: 30_000,
    socketTimeout: 60_000,
  });
  return {
    async send(mail) {
      const info = (await transport.sendMail({
        from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        ...(mail.inReplyTo ? { inReplyTo: mail.inReplyTo, references: mail.inReplyTo } : {}),
        // Automatic replies say so (RFC 3834), so auto-responders do not answer them.
        headers: { 'Auto-Submitted': 'auto-replied' },
      })) as { messageId: string };
      return info.messageId;
    },
    close: () => transport.close(),
  };
}
