// Request body intake for one request, whichever transport carries it. The transport registers
// for body chunks when the request arrives (uWS accepts an onData handler only synchronously in
// the request callback, in ArrayBuffers that are neutered when the callback returns, so those
// chunks are copied; node:http hands over Buffers that are ours to keep) and pushes each chunk
// here. The reader enforces the size limit (413, also for chunked bodies that grow past it) and
// lets the handler take the body in one of three modes:
// - whole (`whole()`, the promise behind `req.body()`/`req.json()`) and complete (`complete()`,
//   the callback behind `req.readBody()`): the body is gathered in memory up to the route's
//   limit. These never pause the socket: nothing would drain the queue before the last chunk,
//   so a pause there would stall the request for good. The limit is what bounds them.
// - stream (`stream()`, behind `req.bodyStream()`): chunks go to a consumer one at a time; the
//   socket pauses while more than BODY_HIGH_WATER_BYTES wait for it and resumes below half that.

import { HttpError } from './types.js';

/** The flow control a transport offers for one request's body. */
export interface BodySource {
  pauseBody(): void;
  resumeBody(): void;
}

/** Bytes queued for a chunk consumer before the socket pauses. */
export const BODY_HIGH_WATER_BYTES = 4 * 1024 * 1024;

type Mode = 'unclaimed' | 'whole' | 'stream';

export class BodyReader {
  private chunks: Buffer[] = [];
  private received = 0;
  private queued = 0;
  private done = false;
  private failure: HttpError | undefined;
  private waiter: (() => void) | undefined;
  private callback: ((error: HttpError | undefined, body: Buffer) => void) | undefined;
  private paused = false;
  private mode: Mode = 'unclaimed';
  private discarding = false;

  constructor(
    private readonly source: BodySource,
    private readonly limit: number,
    private readonly onTooLarge: (error: HttpError) => void,
  ) {}

  /**
   * One body chunk from the transport. `owned`: the memory is the reader's to keep (node:http
   * Buffers); otherwise it is copied, as uWS reuses the memory once its callback returns.
   */
  push(chunk: Uint8Array, isLast: boolean, owned: boolean): void {
    if (this.discarding || this.failure || this.done) return;
    this.received += chunk.byteLength;
    if (this.received > this.limit) {
      // The core answers the 413 (closing the connection) before a waiting handler hears of it.
      const error = tooLarge(this.limit);
      this.failure = error;
      if (this.paused) {
        // The 413 is written next; a paused socket would hold it back.
        this.paused = false;
        this.source.resumeBody();
      }
      this.onTooLarge(error);
      this.fail(error);
      return;
    }
    if (chunk.byteLength > 0) {
      let kept: Buffer;
      if (owned) kept = chunk as Buffer;
      else {
        kept = Buffer.allocUnsafe(chunk.byteLength);
        kept.set(chunk);
      }
      this.chunks.push(kept);
      this.queued += kept.byteLength;
    }
    if (isLast) {
      this.done = true;
      if (this.callback) return this.deliver();
    } else if (this.mode === 'stream' && this.queued > BODY_HIGH_WATER_BYTES && !this.paused) {
      this.paused = true;
      this.source.pauseBody();
    }
    this.wake();
  }

  /** True once the last byte arrived (or the body failed): nothing more will come from the socket. */
  get settled(): boolean {
    return this.done || this.failure !== undefined;
  }

  /**
   * The response is about to be written before the body was read to its end: drop what is
   * queued and what still arrives (no copies), and let a paused socket read again (uWS accepts no
   * calls on the response once it ended; node:http must read the rest to reach the next request).
   */
  discard(): void {
    if (this.discarding) return;
    this.discarding = true;
    this.chunks = [];
    this.queued = 0;
    if (this.paused) {
      this.paused = false;
      this.source.resumeBody();
    }
    // A consumer still waiting learns that no more is coming; a pending readBody callback is
    // dropped (its request is answered already).
    this.callback = undefined;
    if (!this.settled) {
      this.failure = new HttpError(409, 'response_sent', 'the response was sent before the body was read');
      this.wake();
    }
  }

  /** The client went away: a waiting reader gets an error instead of hanging. */
  abort(): void {
    if (!this.done) this.fail(new HttpError(400, 'aborted', 'client closed the connection'));
  }

  /**
   * Calls back with the whole body as soon as it is complete — synchronously inside the transport's
   * data callback when the last chunk arrives, so the answer is written in the same corked batch. The hot
   * paths use this instead of `whole()`, which costs a promise hop out of the network callback.
   */
  complete(callback: (error: HttpError | undefined, body: Buffer) => void): void {
    this.claim('whole');
    this.callback = callback;
    if (this.settled) this.deliver();
  }

  private deliver(): void {
    const callback = this.callback!;
    this.callback = undefined;
    if (this.failure) return callback(this.failure, Buffer.alloc(0));
    callback(undefined, this.take());
  }

  async whole(): Promise<Buffer> {
    this.claim('whole');
    while (!this.settled) await this.wait();
    if (this.failure) throw this.failure;
    return this.take();
  }

  async *stream(): AsyncIterable<Buffer> {
    this.claim('stream');
    for (;;) {
      if (this.failure) throw this.failure;
      const chunk = this.chunks.shift();
      if (chunk) {
        this.queued -= chunk.byteLength;
        if (this.paused && this.queued < BODY_HIGH_WATER_BYTES / 2) {
          this.paused = false;
          this.source.resumeBody();
        }
        yield chunk;
        continue;
      }
      if (this.done) return;
      await this.wait();
    }
  }

  private take(): Buffer {
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.queued);
    this.chunks = [];
    this.queued = 0;
    return body;
  }

  private claim(mode: Mode): void {
    if (this.mode !== 'unclaimed') throw new Error('request body already consumed');
    this.mode = mode;
  }

  private fail(error: HttpError): void {
    this.failure = error;
    this.chunks = [];
    this.queued = 0;
    this.wake();
    if (this.callback) this.deliver();
  }

  private wait(): Promise<void> {
    return new Promise((resolve) => (this.waiter = resolve));
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }
}

export function tooLarge(limit: number): HttpError {
  return new HttpError(413, 'payload_too_large', `request body exceeds the limit of ${limit} bytes`, {
    limit_bytes: limit,
  });
}
