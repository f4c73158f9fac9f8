// SMTP for tests: a raw client over one TCP connection (commands one at a time or pipelined, a
// DATA body as exact bytes, whether the server closed the connection) and a sink server that
// keeps what it is sent, refusing the first deliveries when asked (a relay that is down).

import { connect, type Socket } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface SmtpReply {
  code: number;
  text: string;
}

export class SmtpClient {
  private buffer = '';
  private replies: SmtpReply[] = [];
  private waiters: (() => void)[] = [];
  private isClosed = false;
  readonly closed: Promise<void>;

  private constructor(private readonly socket: Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      let nl: number;
      let lines: string[] = [];
      while ((nl = this.buffer.indexOf('\r\n')) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 2);
        lines.push(line.slice(4));
        // `250-…` continues, `250 …` ends a reply.
        if (line[3] !== '-') {
          this.replies.push({ code: Number(line.slice(0, 3)), text: lines.join('\n') });
          lines = [];
        }
      }
      this.wake();
    });
    this.closed = new Promise((resolve) => {
      socket.on('close', () => {
        this.isClosed = true;
        this.wake();
        resolve();
      });
      socket.on('error', () => undefined);
    });
  }

  static async open(port: number): Promise<SmtpClient> {
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const client = new SmtpClient(socket);
    const greeting = await client.next();
    if (greeting?.code !== 220) throw new Error(`no greeting: ${JSON.stringify(greeting)}`);
    return client;
  }

  private wake() {
    for (const w of this.waiters.splice(0)) w();
  }

  /** The next reply; undefined when the server closed the connection first. */
  async next(): Promise<SmtpReply | undefined> {
    while (this.replies.length === 0 && !this.isClosed) await new Promise<void>((r) => this.waiters.push(r));
    return this.replies.shift();
  }

  async command(line: string): Promise<SmtpReply | undefined> {
    this.socket.write(line + '\r\n');
    return this.next();
  }

  /** Writes every line at once (PIPELINING), then reads replies until `count` or the close. */
  async pipeline(lines: string[]): Promise<SmtpReply[]> {
    this.socket.write(lines.map((l) => l + '\r\n').join(''));
    const out: SmtpReply[] = [];
    for (let i = 0; i < lines.length; i++) {
      const r = await this.next();
      if (!r) break;
      out.push(r);
    }
    return out;
  }

  /** DATA, then the message bytes (dot-stuffed here) and the final dot; the reply to the end. */
  async data(message: Buffer | string): Promise<SmtpReply | undefined> {
    const go = await this.command('DATA');
    if (go?.code !== 354) return go;
    const bytes = Buffer.isBuffer(message) ? message : Buffer.from(message, 'utf8');
    const stuffed = Buffer.from(bytes.toString('latin1').replace(/(^|\r\n)\./g, '$1..'), 'latin1');
    this.socket.write(stuffed);
    this.socket.write(stuffed.subarray(-2).toString() === '\r\n' ? '.\r\n' : '\r\n.\r\n');
    return this.next();
  }

  async quit(): Promise<void> {
    if (!this.isClosed) this.socket.write('QUIT\r\n');
    this.socket.end();
    await this.closed;
  }
}

export interface SinkMail {
  from: string;
  to: string[];
  raw: Buffer;
  parsed: ParsedMail;
}

/** A sink SMTP server on a free port: what it was sent, in order. */
export interface SmtpSink {
  port: number;
  mails: SinkMail[];
  /** Deliveries refused so far (451 at MAIL FROM). */
  refusedCount: number;
  /** Refuse the next `n` deliveries. */
  refuseNext(n: number): void;
  close(): Promise<void>;
}

export async function startSink(): Promise<SmtpSink> {
  let refuse = 0;
  const sink: SmtpSink = {
    port: 0,
    mails: [],
    refusedCount: 0,
    refuseNext: (n) => {
      refuse = n;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onMailFrom(_address, _session, callback) {
      if (refuse > 0) {
        refuse -= 1;
        sink.refusedCount += 1;
        callback(Object.assign(new Error('relay down for the test'), { responseCode: 451 }));
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        simpleParser(raw).then(
          (parsed) => {
            sink.mails.push({
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((r) => r.address),
              raw,
              parsed,
            });
            callback();
          },
          (err: Error) => callback(err),
        );
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.server.address();
  sink.port = typeof address === 'object' && address ? address.port : 0;
  return sink;
}

/** A MIME message; `attachments` as (raw Content-Disposition filename parameter, body). */
export function mimeMessage(o: {
  from?: string;
  to?: string;
  subject?: string;
  messageId?: string | null;
  text?: string;
  attachments?: { disposition: string; body: string }[];
  extraHeaders?: string;
}): string {
  const head = [
    `From: ${o.from ?? 'alice@example.com'}`,
    `To: ${o.to ?? 'inbox@mail.test'}`,
    `Subject: ${o.subject ?? 'hello'}`,
    'Date: Fri, 27 Nov 2026 06:00:00 +0000',
    ...(o.messageId === null
      ? []
      : [`Message-ID: ${o.messageId ?? `<${Math.random().toString(36).slice(2)}@example.com>`}`]),
    'MIME-Version: 1.0',
    ...(o.extraHeaders ? [o.extraHeaders] : []),
  ];
  const atts = o.attachments ?? [];
  if (atts.length === 0)
    return [...head, 'Content-Type: text/plain; charset=utf-8', '', o.text ?? 'body text', ''].join('\r\n');
  const b = 'BOUNDARY-xyz';
  const parts = [`--${b}`, 'Content-Type: text/plain; charset=utf-8', '', o.text ?? 'body text'];
  for (const a of atts)
    parts.push(
      `--${b}`,
      'Content-Type: text/plain',
      `Content-Disposition: attachment; ${a.disposition}`,
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from(a.body).toString('base64'),
    );
  parts.push(`--${b}--`, '');
  return [...head, `Content-Type: multipart/mixed; boundary="${b}"`, '', ...parts].join('\r\n');
}

/** One transaction: EHLO, MAIL FROM, RCPT TO each, DATA; every reply. */
export async function deliver(port: number, from: string, to: string[], body: string | Buffer) {
  const c = await SmtpClient.open(port);
  try {
    const ehlo = await c.command('EHLO client.test');
    const mail = await c.command(`MAIL FROM:<${from}>`);
    const rcpts = [];
    for (const t of to) rcpts.push(await c.command(`RCPT TO:<${t}>`));
    const data = rcpts.some((r) => r?.code === 250) ? await c.data(body) : undefined;
    return { ehlo, mail, rcpts, data };
  } finally {
    await c.quit();
  }
}
