// A minimal memcached text-protocol client: multi-key get, incr and add, pipelined on a few
// connections per node, over TCP or TLS. Written here rather than taken from memjs because
// memjs 1.3 has neither TLS nor a multi-key get, and the object cache needs both
// (OBJCACHE_TLS_*; one round trip per node per decision). Keys go to nodes by
// crc32(key) mod nodes, the rule of the Go client the upstream service uses, so both services
// pick the same node for a key.

import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import type { HostPort } from '../settings/index.js';
import { CodedError } from '../../core/errors.js';

export class MemcachedError extends CodedError {
  constructor(message: string) {
    super('memcached_failed', message);
  }
}

/** memcached refuses keys over 250 bytes and keys with spaces or control characters. */
export function invalidKeyReason(key: string): string | undefined {
  if (Buffer.byteLength(key) > 250) return 'longer than 250 bytes';
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f) return 'contains whitespace or control characters';
  }
  if (key.length === 0) return 'empty';
  return undefined;
}

type Pending =
  | {
      kind: 'get';
      values: Map<string, string>;
      resolve(v: Map<string, string>): void;
      reject(e: Error): void;
    }
  | { kind: 'incr'; resolve(v: number | undefined): void; reject(e: Error): void }
  | { kind: 'add'; resolve(v: boolean): void; reject(e: Error): void };

const CRLF = Buffer.from('\r\n');

class Connection {
  private socket: Socket | undefined;
  private readonly queue: Pending[] = [];
  private buffer: Buffer = Buffer.alloc(0);
  private connected = false;

  constructor(
    private readonly node: HostPort,
    private readonly tls: ConnectionOptions | undefined,
    private readonly timeoutMs: number,
  ) {}

  get isConnected(): boolean {
    return this.connected;
  }

  get inFlight(): number {
    return this.queue.length;
  }

  private open(): Socket {
    const { host, port } = this.node;
    const onReady = (): void => {
      if (this.socket === socket) this.connected = true;
    };
    const socket = this.tls
      ? tlsConnect({ host, port, servername: host, ...this.tls }, onReady)
      : netConnect({ host, port }, onReady);
    socket.setNoDelay(true);
    socket.setTimeout(this.timeoutMs);
    // Events of a socket that has been replaced must not touch its successor.
    const current = (): boolean => this.socket === socket;
    socket.on('data', (chunk: Buffer) => {
      if (current()) this.onData(chunk);
    });
    socket.on('timeout', () => {
      if (current() && this.queue.length > 0)
        this.fail(new MemcachedError(`memcached ${host}:${port}: no answer within ${this.timeoutMs} ms`));
    });
    socket.on('error', (error) => {
      if (current()) this.fail(new MemcachedError(`memcached ${host}:${port}: ${error.message}`));
    });
    socket.on('close', () => {
      if (current()) this.fail(new MemcachedError(`memcached ${host}:${port}: connection closed`));
    });
    return socket;
  }

  private fail(error: Error): void {
    const socket = this.socket;
    this.socket = undefined;
    this.connected = false;
    this.buffer = Buffer.alloc(0);
    socket?.destroy();
    const pending = this.queue.splice(0);
    for (const p of pending) p.reject(error);
  }

  send(line: string, pending: Pending): void {
    this.socket ??= this.open();
    this.queue.push(pending);
    this.socket.write(line);
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    let pos = 0;
    const buf = this.buffer;
    while (this.queue.length > 0) {
      const eol = buf.indexOf(CRLF, pos);
      if (eol < 0) break;
      const line = buf.toString('latin1', pos, eol);
      const head = this.queue[0]!;
      if (line === 'ERROR' || line.startsWith('CLIENT_ERROR') || line.startsWith('SERVER_ERROR')) {
        this.queue.shift();
        pos = eol + 2;
        head.reject(new MemcachedError(`memcached: ${line}`));
        continue;
      }
      if (head.kind === 'get') {
        if (line === 'END') {
          this.queue.shift();
          pos = eol + 2;
          head.resolve(head.values);
          continue;
        }
        const m = /^VALUE (\S+) \d+ (\d+)/.exec(line);
        if (!m) {
          this.fail(new MemcachedError(`memcached: unexpected reply ${JSON.stringify(line)}`));
          return;
        }
        const bytes = Number(m[2]);
        if (buf.length < eol + 2 + bytes + 2) break;
        head.values.set(m[1]!, buf.toString('latin1', eol + 2, eol + 2 + bytes));
        pos = eol + 2 + bytes + 2;
        continue;
      }
      this.queue.shift();
      pos = eol + 2;
      if (head.kind === 'incr') {
        if (line === 'NOT_FOUND') head.resolve(undefined);
        else if (/^\d+$/.test(line.trim())) head.resolve(Number(line.trim()));
        else head.reject(new MemcachedError(`memcached: unexpected incr reply ${JSON.stringify(line)}`));
      } else {
        if (line === 'STORED') head.resolve(true);
        else if (line === 'NOT_STORED') head.resolve(false);
        else head.reject(new MemcachedError(`memcached: unexpected add reply ${JSON.stringify(line)}`));
      }
    }
    this.buffer = pos >= buf.length ? Buffer.alloc(0) : buf.subarray(pos);
    if (this.queue.length === 0) this.socket?.setTimeout(0);
    else this.socket?.setTimeout(this.timeoutMs);
  }

  close(): void {
    const socket = this.socket;
    this.socket = undefined;
    if (socket) {
      socket.removeAllListeners('close');
      socket.on('error', () => undefined);
      socket.end();
      socket.destroy();
    }
    const pending = this.queue.splice(0);
    for (const p of pending) p.reject(new MemcachedError('memcached client closed'));
  }
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

export function crc32(text: string): number {
  let crc = 0xffffffff;
  for (const b of Buffer.from(text)) crc = CRC_TABLE[(crc ^ b) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

export interface MemcachedClientOptions {
  /** Connections kept per node (OBJCACHE_MAX_IDLE_CONNS); requests are pipelined on them. */
  connectionsPerNode: number;
  timeoutMs: number;
  tls?: ConnectionOptions | undefined;
}

class Node {
  private readonly conns: Connection[];
  private next = 0;
  constructor(
    readonly address: HostPort,
    options: MemcachedClientOptions,
  ) {
    this.conns = Array.from(
      { length: options.connectionsPerNode },
      () => new Connection(address, options.tls, options.timeoutMs),
    );
  }
  /** The least busy connection, round robin among equals. */
  pick(): Connection {
    let best = this.conns[this.next]!;
    for (const c of this.conns) if (c.inFlight < best.inFlight) best = c;
    this.next = (this.next + 1) % this.conns.length;
    return best;
  }
  connected(): boolean {
    return this.conns.some((c) => c.isConnected);
  }
  close(): void {
    for (const c of this.conns) c.close();
  }
}

export class MemcachedClient {
  private nodes: Node[] = [];

  constructor(
    nodes: readonly HostPort[],
    private readonly options: MemcachedClientOptions,
  ) {
    this.setNodes(nodes);
  }

  /** Replaces the node list (SRV refresh); connections of nodes still listed are kept. */
  setNodes(addresses: readonly HostPort[]): void {
    const old = new Map(this.nodes.map((n) => [`${n.address.host}:${n.address.port}`, n]));
    const next: Node[] = [];
    for (const a of addresses) {
      const id = `${a.host}:${a.port}`;
      const existing = old.get(id);
      if (existing) old.delete(id);
      next.push(existing ?? new Node(a, this.options));
    }
    this.nodes = next;
    for (const n of old.values()) n.close();
  }

  addresses(): HostPort[] {
    return this.nodes.map((n) => n.address);
  }

  connectedNodes(): number {
    return this.nodes.filter((n) => n.connected()).length;
  }

  private nodeFor(key: string): Node {
    if (this.nodes.length === 0) throw new MemcachedError('memcached: no servers');
    return this.nodes[this.nodes.length === 1 ? 0 : crc32(key) % this.nodes.length]!;
  }

  /** One `get k1 k2 …` per node; keys missing from the result were not found. */
  async getMulti(keys: readonly string[]): Promise<Map<string, string>> {
    const byNode = new Map<Node, string[]>();
    for (const key of keys) {
      const node = this.nodeFor(key);
      const list = byNode.get(node);
      if (list) list.push(key);
      else byNode.set(node, [key]);
    }
    const parts = await Promise.all(
      [...byNode].map(
        ([node, list]) =>
          new Promise<Map<string, string>>((resolve, reject) => {
            node
              .pick()
              .send(`get ${list.join(' ')}\r\n`, { kind: 'get', values: new Map(), resolve, reject });
          }),
      ),
    );
    if (parts.length === 1) return parts[0]!;
    const all = new Map<string, string>();
    for (const p of parts) for (const [k, v] of p) all.set(k, v);
    return all;
  }

  /** The new value, or undefined when the key does not exist. */
  incr(key: string, delta: number): Promise<number | undefined> {
    return new Promise((resolve, reject) => {
      this.nodeFor(key).pick().send(`incr ${key} ${delta}\r\n`, { kind: 'incr', resolve, reject });
    });
  }

  /** True when stored, false when the key already existed. */
  add(key: string, value: string, exptime: number): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.nodeFor(key)
        .pick()
        .send(`add ${key} 0 ${exptime} ${Buffer.byteLength(value)}\r\n${value}\r\n`, {
          kind: 'add',
          resolve,
          reject,
        });
    });
  }

  close(): void {
    for (const n of this.nodes) n.close();
    this.nodes = [];
  }
}
