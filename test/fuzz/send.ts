// Sending one fuzz case and capturing what came back, on a new connection per case (a dropped
// connection is then this case's doing). Most cases go through node's `http` client, which
// sends paths as given (no URL normalisation, so `..` and `%2F` reach the server as written).
// Cases node refuses to send (raw bytes in the path, control characters in a header, broken
// framing), bodies over 64 KiB and every HEAD request go over a plain socket with `Connection:
// close`, read to the end: a HEAD answer must end after its headers (RFC 9110 §9.3.2).

import * as http from 'node:http';
import * as net from 'node:net';

export interface Outcome {
  /** `response`: a complete HTTP answer; `dropped`: the connection ended without one. */
  kind: 'response' | 'dropped' | 'timeout';
  status?: number;
  headers?: Record<string, string>;
  body?: Buffer;
  /** Raw sends only: bytes after the header block (what a HEAD answer must not have). */
  error?: string;
}

export interface Wire {
  host: string;
  port: number;
  method: string;
  /** Request target as sent (path and query). */
  target: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export class Sender {
  constructor(private readonly timeoutMs: number) {}

  /** Through node's client; falls back to a raw socket for what node refuses to send. */
  send(wire: Wire): Promise<Outcome> {
    // A server may answer a large body early (413) and close: node's client then reports the
    // failed write (EPIPE) instead of the answer, while the raw read still sees the answer.
    if (wire.method === 'HEAD') return this.raw(wire.host, wire.port, serialise(wire));
    // Without `Connection: close`: had we asked for a close, an answer given before the body was
    // read would be followed by a close with unread bytes, a TCP reset, and a lost answer.
    if ((wire.body?.length ?? 0) > 64 * 1024)
      return this.raw(wire.host, wire.port, serialise(wire, false), false, true);
    return new Promise<Outcome>((resolve) => {
      let done = false;
      const finish = (outcome: Outcome) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      let req: http.ClientRequest;
      try {
        req = http.request({
          host: wire.host,
          port: wire.port,
          method: wire.method,
          path: wire.target,
          headers: { ...wire.headers, 'content-length': String(wire.body?.length ?? 0), connection: 'close' },
          // A connection per case: a dropped connection is then the fault of this case, not of
          // an earlier one that left the server's parser in a bad state.
          agent: false,
        });
      } catch {
        // ERR_UNESCAPED_CHARACTERS, ERR_INVALID_CHAR …: the bytes go out as they are instead.
        done = true;
        resolve(this.raw(wire.host, wire.port, serialise(wire)));
        return;
      }
      const timer = setTimeout(() => {
        finish({ kind: 'timeout' });
        req.destroy();
      }, this.timeoutMs);
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          finish({
            kind: 'response',
            status: res.statusCode ?? 0,
            headers: flatten(res.headers),
            body: Buffer.concat(chunks),
          }),
        );
        res.on('error', (e) =>
          finish({ kind: 'dropped', error: (e as NodeJS.ErrnoException).code ?? e.message }),
        );
        res.on('aborted', () => finish({ kind: 'dropped', error: 'response aborted' }));
      });
      req.on('error', (e) =>
        finish({ kind: 'dropped', error: (e as NodeJS.ErrnoException).code ?? e.message }),
      );
      req.end(wire.body);
    });
  }

  /**
   * Writes the bytes, then reads until the server closes (we asked it to). `halfClose` ends our
   * side right after the bytes: uWebSockets.js keeps a connection whose bytes it refused open
   * until its idle timeout (about 10 s) unless the client's side has ended, but it also treats
   * that end as the client going away, so only requests its parser refuses are sent that way.
   */
  raw(host: string, port: number, bytes: Buffer, halfClose = false, untilAnswered = false): Promise<Outcome> {
    return new Promise<Outcome>((resolve) => {
      const chunks: Buffer[] = [];
      let done = false;
      const socket = net.connect(port, host, () => (halfClose ? socket.end(bytes) : socket.write(bytes)));
      const finish = (outcome: Outcome) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        socket.destroy();
        resolve(outcome);
      };
      const timer = setTimeout(
        () => finish(parseRaw(Buffer.concat(chunks)) ?? { kind: 'timeout' }),
        this.timeoutMs,
      );
      socket.on('data', (c: Buffer) => {
        chunks.push(c);
        if (!untilAnswered) return;
        const answer = parseRaw(Buffer.concat(chunks), true);
        if (answer) finish(answer);
      });
      socket.on('error', (e) =>
        finish(
          parseRaw(Buffer.concat(chunks)) ?? {
            kind: 'dropped',
            error: (e as NodeJS.ErrnoException).code ?? e.message,
          },
        ),
      );
      socket.on('close', () =>
        finish(parseRaw(Buffer.concat(chunks)) ?? { kind: 'dropped', error: 'closed without a response' }),
      );
    });
  }
}

/** An HTTP/1.1 request as bytes, with `Connection: close` so the raw read ends. */
export function serialise(wire: Wire, close = true): Buffer {
  const head = [`${wire.method} ${wire.target} HTTP/1.1`];
  const headers: Record<string, string> = { host: `${wire.host}:${wire.port}`, ...wire.headers };
  if (close) headers['connection'] = 'close';
  if (wire.body !== undefined || !['GET', 'HEAD', 'DELETE', 'OPTIONS'].includes(wire.method))
    headers['content-length'] = String(wire.body?.length ?? 0);
  for (const [k, v] of Object.entries(headers)) head.push(`${k}: ${v}`);
  return Buffer.concat([Buffer.from(head.join('\r\n') + '\r\n\r\n', 'latin1'), wire.body ?? Buffer.alloc(0)]);
}

/** The first answer in a raw byte stream, or undefined when there is none (or, with
 * `complete`, when its body has not fully arrived by its Content-Length). */
export function parseRaw(data: Buffer, complete = false): Outcome | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const lines = data.subarray(0, end).toString('latin1').split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  if (!status) return undefined;
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = data.subarray(end + 4);
  if (complete) {
    const length = Number(headers['content-length'] ?? NaN);
    if (!(body.length >= length) && !/\r\n0\r\n\r\n$/.test(body.toString('latin1'))) return undefined;
  }
  if (headers['transfer-encoding']?.toLowerCase().includes('chunked')) body = dechunk(body);
  return { kind: 'response', status: Number(status[1]), headers, body };
}

function dechunk(data: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  while (at < data.length) {
    const eol = data.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(data.subarray(at, eol).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    out.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

function flatten(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers))
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}
