// Request body intake for one uWS response. uWS hands body chunks only to an onData handler
// registered synchronously in the request callback, in ArrayBuffers that are neutered when the
// callback returns; so the core registers it eagerly, copies each chunk, enforces the size
// limit (413, also for chunked bodies that grow past it), and lets the handler either take the
// whole body or iterate chunks with backpressure (pause/resume) for uploads.

import type { HttpResponse as UwsResponse } from 'uWebSockets.js';
import { HttpError } from './types.js';

const HIGH_WATER = 4 * 1024 * 1024;

export class BodyReader {
  private chunks: Buffer[] = [];
  private received = 0;
  private queued = 0;
  private done = false;
  private failure: HttpError | undefined;
  private waiter: (() => void) | undefined;
  private callback: ((error: HttpError | undefined, body: Buffer) => void) | undefined;
  private paused = false;
  private consumed = false;

  constructor(
    private readonly res: UwsResponse,
    private readonly limit: number,
    private readonly onTooLarge: (error: HttpError) => void,
  ) {}

  /** Registers onData; call synchronously inside the uWS handler. */
  attach(): void {
    this.res.onData((chunk, isLast) => {
      if (this.failure || this.done) return;
      this.received += chunk.byteLength;
      if (this.received > this.limit) {
        this.fail(tooLarge(this.limit));
        this.onTooLarge(this.failure!);
        return;
      }
      if (chunk.byteLength > 0) {
        // Copy: uWS reuses the memory behind `chunk` once this callback returns.
        const copy = Buffer.allocUnsafe(chunk.byteLength);
        copy.set(new Uint8Array(chunk));
        this.chunks.push(copy);
        this.queued += copy.byteLength;
      }
      if (isLast) {
        this.done = true;
        if (this.callback) return this.deliver();
      } else if (this.consumed && this.queued > HIGH_WATER && !this.paused) {
        this.paused = true;
        this.res.pause();
      }
      this.wake();
    });
  }

  /** The body ended without bytes (no Content-Length, no chunked encoding). */
  markEmpty(): void {
    this.done = true;
  }

  /** The client went away: a waiting reader gets an error instead of hanging. */
  abort(): void {
    if (!this.done) this.fail(new HttpError(400, 'aborted', 'client closed the connection'));
  }

  /**
   * Calls back with the whole body as soon as it is complete — synchronously inside uWS's onData
   * when the last chunk arrives, so the answer is written in the same corked batch. The hot
   * paths use this instead of `whole()`, which costs a promise hop out of the uWS callback.
   */
  complete(callback: (error: HttpError | undefined, body: Buffer) => void): void {
    this.claim();
    this.callback = callback;
    if (this.done || this.failure) this.deliver();
  }

  private deliver(): void {
    const callback = this.callback!;
    this.callback = undefined;
    if (this.failure) return callback(this.failure, Buffer.alloc(0));
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.queued);
    this.chunks = [];
    callback(undefined, body);
  }

  async whole(): Promise<Buffer> {
    this.claim();
    while (!this.done && !this.failure) await this.wait();
    if (this.failure) throw this.failure;
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.queued);
    this.chunks = [];
    return body;
  }

  async *stream(): AsyncIterable<Buffer> {
    this.claim();
    for (;;) {
      if (this.failure) throw this.failure;
      const chunk = this.chunks.shift();
      if (chunk) {
        this.queued -= chunk.byteLength;
        if (this.paused && this.queued < HIGH_WATER / 2) {
          this.paused = false;
          this.res.resume();
        }
        yield chunk;
        continue;
      }
      if (this.done) return;
      await this.wait();
    }
  }

  private claim(): void {
    if (this.consumed) throw new Error('request body already consumed');
    this.consumed = true;
  }

  private fail(error: HttpError): void {
    this.failure = error;
    this.chunks = [];
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
