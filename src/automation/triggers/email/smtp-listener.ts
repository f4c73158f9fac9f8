// The SMTP listener (the only module that imports smtp-server): plain SMTP without AUTH or
// STARTTLS, taking mail for the automation service's own aliases only, so it never relays. The
// checks are the receiver's (receiver.ts); this module turns their answers into SMTP replies,
// and bounds what one connection can make the service do (recipients, refused commands).

import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from 'smtp-server';
import type { Readable } from 'node:stream';

/** An SMTP reply code and text; `ok` goes out as 250. */
export type SmtpAnswer = 'ok' | { code: number; message: string };

export interface SmtpHandlers {
  mailFrom(address: string): SmtpAnswer;
  rcptTo(address: string): Promise<SmtpAnswer>;
  data(
    stream: Readable,
    envelope: { from: string; to: string[]; remote: string },
    sizeExceeded: () => boolean,
  ): Promise<SmtpAnswer>;
}

export interface SmtpListenerOptions {
  host: string;
  port: number;
  /** The name in the greeting and EHLO reply. */
  name: string;
  maxMessageBytes: number;
  maxRecipients: number;
  maxClients: number;
}

export interface SmtpListener {
  readonly port: number;
  close(): Promise<void>;
}

function smtpError(answer: Exclude<SmtpAnswer, 'ok'>): Error {
  return Object.assign(new Error(answer.message), { responseCode: answer.code });
}

const reply = (answer: SmtpAnswer, callback: (err?: Error | null) => void) =>
  callback(answer === 'ok' ? null : smtpError(answer));

export async function startSmtpListener(
  options: SmtpListenerOptions,
  handlers: SmtpHandlers,
  onError: (err: Error) => void,
): Promise<SmtpListener> {
  // Refused recipients per connection: past the bound the connection is closed (421), so a
  // pipelined flood of RCPTs costs a bounded number of alias lookups.
  const refused = new Map<string, number>();
  const server = new SMTPServer({
    name: options.name,
    banner: 'Sluice automation mail intake',
    size: options.maxMessageBytes,
    maxRecipients: options.maxRecipients,
    maxClients: options.maxClients,
    // Mail comes from other MTAs: no logins, and no TLS without an operator's certificate.
    disabledCommands: ['AUTH', 'STARTTLS'],
    authOptional: true,
    disableReverseLookup: true,
    hideDSN: true,
    logger: false,
    socketTimeout: 60_000,
    closeTimeout: 5_000,
    onMailFrom(address: SMTPServerAddress, _session: SMTPServerSession, callback) {
      reply(handlers.mailFrom(address.address), callback);
    },
    onRcptTo(address: SMTPServerAddress, session: SMTPServerSession, callback) {
      const misses = refused.get(session.id) ?? 0;
      if (misses >= options.maxRecipients) {
        reply({ code: 421, message: 'too many refused recipients, closing' }, callback);
        return;
      }
      handlers.rcptTo(address.address).then(
        (answer) => {
          if (answer !== 'ok') refused.set(session.id, misses + 1);
          reply(answer, callback);
        },
        (err: Error) => {
          onError(err);
          reply({ code: 451, message: 'the recipient cannot be checked now, try again later' }, callback);
        },
      );
    },
    onData(stream, session: SMTPServerSession, callback) {
      const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
      const envelope = {
        from,
        to: session.envelope.rcptTo.map((r) => r.address),
        remote: session.remoteAddress,
      };
      handlers
        .data(stream, envelope, () => stream.sizeExceeded)
        .then(
          (answer) => reply(answer, callback),
          (err: Error) => {
            onError(err);
            stream.resume();
            reply({ code: 451, message: 'the message cannot be taken now, try again later' }, callback);
          },
        );
    },
    onClose(session: SMTPServerSession) {
      refused.delete(session.id);
    },
  });
  server.on('error', onError);
  await new Promise<void>((resolve, reject) => {
    const failed = (err: Error) => reject(err);
    server.server.once('error', failed);
    server.listen(options.port, options.host, () => {
      server.server.off('error', failed);
      resolve();
    });
  });
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return {
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
