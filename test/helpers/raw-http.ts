// A raw HTTP/1.1 client over one TCP connection, for tests that need what fetch hides: the
// choice of Content-Length or chunked framing for large bodies, answers that arrive while the
// body is still being sent, and whether the server kept or closed the connection.

import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  text: string;
  json(): any;
}

export type Framing = 'length' | 'chunked';

export interface SendOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer;
  framing?: Framing;
  /** Write the head only, never the body (for refusals that must come before any body byte). */
  headOnly?: boolean;
  /** Bytes per write (default 256 KiB). */
  piece?: number;
  /** Called after each body piece was accepted by the socket. */
  onPiece?: () => void;
}

export class RawConnection {
  private received = Buffer.alloc(0);
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes a whole response needs, once its head was read (so large bodies are joined once). */
  private needed = 0;
  private waiters: (() => void)[] = [];
  private isClosed = false;
  /** Resolves when the server closed the connection (or it broke). */
  readonly closed: Promise<void>;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (data: Buffer) => {
      this.pending.push(data);
      this.pendingBytes += data.length;
      if (this.received.length + this.pendingBytes >= this.needed) this.notify();
    });
    // A server that refuses a body closes while we may still be writing: EPIPE/ECONNRESET are
    // expected then; what was received before stays readable.
    socket.on('error', () => undefined);
    this.closed = new Promise((resolve) =>
      socket.on('close', () => {
        this.isClosed = true;
        this.notify();
        resolve();
      }),
    );
  }

  static open(port: number, host = '127.0.0.1'): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, host);
      socket.once('connect', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  get isOpen(): boolean {
    return !this.isClosed;
  }

  /** Sends one request and waits for its response (which may come before the body is sent). */
  async request(path: string, options: SendOptions = {}): Promise<RawResponse> {
    const answer = this.response();
    await this.send(path, options);
    return answer;
  }

  /** Writes a request; resolves when all of it was accepted or the connection closed. Returns whether all was written. */
  async send(path: string, options: SendOptions = {}): Promise<boolean> {
    const body = options.body;
    const framing = options.framing ?? 'length';
    const headers: Record<string, string> = { host: 'test', ...options.headers };
    if (body) {
      if (framing === 'length') headers['content-length'] ??= String(body.length);
      else headers['transfer-encoding'] = 'chunked';
    }
    let head = `${options.method ?? 'POST'} ${path} HTTP/1.1\r\n`;
    for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
    if (!(await this.writeRaw(Buffer.from(head + '\r\n')))) return false;
    if (!body || options.headOnly) return true;
    const piece = options.piece ?? 256 * 1024;
    for (let at = 0; at < body.length; at += piece) {
      const part = body.subarray(at, Math.min(at + piece, body.length));
      const framed =
        framing === 'chunked'
          ? [Buffer.from(part.length.toString(16) + '\r\n'), part, Buffer.from('\r\n')]
          : [part];
      for (const bytes of framed) if (!(await this.writeRaw(bytes))) return false;
      options.onPiece?.();
    }
    if (framing === 'chunked') return this.writeRaw(Buffer.from('0\r\n\r\n'));
    return true;
  }

  /** The next complete response (Content-Length framed, as uWS answers) from what was received. */
  async response(): Promise<RawResponse> {
    for (;;) {
      const parsed = this.parse();
      if (parsed) return parsed;
      if (this.isClosed) {
        throw new Error(
          `connection closed before a whole response: ${JSON.stringify(this.received.toString())}`,
        );
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  close(): void {
    this.socket.destroy();
  }

  private parse(): RawResponse | undefined {
    if (this.pending.length > 0) {
      this.received = Buffer.concat([this.received, ...this.pending]);
      this.pending = [];
      this.pendingBytes = 0;
    }
    const end = this.received.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const lines = this.received.subarray(0, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0]!)?.[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    const length = Number(headers['content-length'] ?? 0);
    if (this.received.length < end + 4 + length) {
      this.needed = end + 4 + length;
      return undefined;
    }
    this.needed = 0;
    const body = Buffer.from(this.received.subarray(end + 4, end + 4 + length));
    this.received = this.received.subarray(end + 4 + length);
    const text = body.toString('utf8');
    return { status, headers, body, text, json: () => JSON.parse(text) };
  }

  /** Writes bytes as they are, waiting for the socket to drain; false once the connection closed. */
  writeRaw(bytes: Buffer): Promise<boolean> {
    if (this.isClosed || this.socket.destroyed) return Promise.resolve(false);
    if (this.socket.write(bytes)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        this.socket.off('drain', onDrain);
        this.socket.off('close', onClose);
        resolve(ok);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      this.socket.on('drain', onDrain);
      this.socket.on('close', onClose);
    });
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

/** One request on a fresh connection, closed afterwards (use RawConnection to see the server's choice). */
export async function rawRequest(
  port: number,
  path: string,
  options: SendOptions = {},
): Promise<RawResponse> {
  const connection = await RawConnection.open(port);
  try {
    return await connection.request(path, options);
  } finally {
    connection.close();
  }
}
