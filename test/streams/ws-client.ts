// A minimal WebSocket client for tests (Node 20 has no global WebSocket and no ws package is
// installed): HTTP upgrade via node:http, masked text frames out, unmasked frames in.

import { request } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';

export interface TestSocket {
  send(text: string): void;
  /** Next text message (waits). */
  next(): Promise<string>;
  readonly closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

export function connectWebSocket(
  url: string,
  headers: Record<string, string>,
): Promise<TestSocket | { status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      headers: {
        ...headers,
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': randomBytes(16).toString('base64'),
      },
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('upgrade', (_res, socket: Socket, head: Buffer) => resolve(wrap(socket, head)));
    req.on('error', reject);
    req.end();
  });
}

function wrap(socket: Socket, head: Buffer): TestSocket {
  let buffer = head;
  const messages: string[] = [];
  const waiters: Array<(m: string) => void> = [];
  let onClose: (v: { code: number; reason: string }) => void = () => undefined;
  const closed = new Promise<{ code: number; reason: string }>((resolve) => (onClose = resolve));
  const deliver = (text: string): void => {
    const waiter = waiters.shift();
    if (waiter) waiter(text);
    else messages.push(text);
  };
  const parse = (): void => {
    for (;;) {
      if (buffer.length < 2) return;
      const opcode = buffer[0]! & 0x0f;
      let length = buffer[1]! & 0x7f;
      let at = 2;
      if (length === 126) {
        if (buffer.length < 4) return;
        length = buffer.readUInt16BE(2);
        at = 4;
      } else if (length === 127) {
        if (buffer.length < 10) return;
        length = Number(buffer.readBigUInt64BE(2));
        at = 10;
      }
      if (buffer.length < at + length) return;
      const payload = buffer.subarray(at, at + length);
      buffer = buffer.subarray(at + length);
      if (opcode === 1) deliver(payload.toString('utf8'));
      if (opcode === 8) {
        onClose({
          code: payload.length >= 2 ? payload.readUInt16BE(0) : 1005,
          reason: payload.subarray(2).toString('utf8'),
        });
        socket.end();
      }
    }
  };
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    parse();
  });
  socket.on('close', () => onClose({ code: 1006, reason: '' }));
  parse();
  return {
    send(text) {
      const payload = Buffer.from(text, 'utf8');
      const mask = randomBytes(4);
      const header =
        payload.length < 126
          ? Buffer.from([0x81, 0x80 | payload.length])
          : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
      const masked = Buffer.alloc(payload.length);
      for (let i = 0; i < payload.length; i++) masked[i] = payload[i]! ^ mask[i & 3]!;
      socket.write(Buffer.concat([header, mask, masked]));
    },
    next() {
      const queued = messages.shift();
      if (queued !== undefined) return Promise.resolve(queued);
      return new Promise((resolve) => waiters.push(resolve));
    },
    closed,
    close() {
      // The server may have closed first (its close frame, then the TCP close): nothing to send.
      if (socket.destroyed || socket.writableEnded) return;
      const mask = randomBytes(4);
      socket.write(Buffer.concat([Buffer.from([0x88, 0x80]), mask]));
      socket.end();
    },
  };
}
