// Turns a protobufjs service into a grpc-js service definition, and a Sluice-style
// implementation (plain async functions) into grpc-js handlers. Services use only these types,
// so nothing outside src/core/grpc touches grpc-js's call objects.

import * as grpc from '@grpc/grpc-js';
import { codecFor } from './codec.js';
import { GrpcError, GrpcStatus } from './errors.js';
import type { ProtoRoot, ProtoService } from './proto.js';

/** A grpc-js service definition whose codecs come from protobufjs. */
export interface GrpcServiceDefinition {
  readonly serviceName: string;
  readonly methods: Readonly<Record<string, GrpcMethodDefinition>>;
}

export interface GrpcMethodDefinition {
  readonly path: string;
  readonly requestStream: boolean;
  readonly responseStream: boolean;
  /** The grpc-js method definition (codecs included); used by the server and client helpers. */
  readonly raw: grpc.MethodDefinition<unknown, unknown>;
}

/** What a handler sees of the call. */
export interface CallContext {
  /** First value of a request header (lower-case name), or undefined. */
  header(name: string): string | undefined;
  readonly peer: string;
  /** Aborted when the client cancels or the deadline passes. */
  readonly signal: AbortSignal;
}

export type UnaryHandler<Req = any, Res = any> = (request: Req, call: CallContext) => Res | Promise<Res>;

export interface ServerStream<Res> {
  /** Returns false when the transport buffer is full; wait for `drain()` before writing more. */
  write(message: Res): boolean;
  drain(): Promise<void>;
  end(): void;
  readonly cancelled: boolean;
}

export type ServerStreamHandler<Req = any, Res = any> = (
  request: Req,
  stream: ServerStream<Res>,
  call: CallContext,
) => void | Promise<void>;

/** Requests arrive through the async iterator; it ends when the client half-closes. */
export interface BidiStream<Req, Res> extends ServerStream<Res>, AsyncIterable<Req> {}

export type BidiHandler<Req = any, Res = any> = (
  stream: BidiStream<Req, Res>,
  call: CallContext,
) => void | Promise<void>;

export type ClientStreamHandler<Req = any, Res = any> = (
  requests: AsyncIterable<Req>,
  call: CallContext,
) => Res | Promise<Res>;

export type MethodHandler = UnaryHandler | ServerStreamHandler | BidiHandler | ClientStreamHandler;

export interface GrpcServiceBinding {
  definition: GrpcServiceDefinition;
  /** Method names as in the .proto (e.g. `ShouldRateLimit`). */
  implementation: Record<string, MethodHandler>;
}

export function serviceDefinition(root: ProtoRoot, fullName: string): GrpcServiceDefinition {
  const service: ProtoService = root.lookupService(fullName);
  const methods: Record<string, GrpcMethodDefinition> = {};
  for (const method of service.methodsArray) {
    method.resolve();
    const req = codecFor<unknown>(method.resolvedRequestType!);
    const res = codecFor<unknown>(method.resolvedResponseType!);
    const path = `/${fullName}/${method.name}`;
    const requestStream = method.requestStream === true;
    const responseStream = method.responseStream === true;
    methods[method.name] = {
      path,
      requestStream,
      responseStream,
      raw: {
        path,
        requestStream,
        responseStream,
        requestSerialize: req.serialize,
        requestDeserialize: req.deserialize,
        responseSerialize: res.serialize,
        responseDeserialize: res.deserialize,
        originalName: method.name,
      },
    };
  }
  return { serviceName: fullName, methods };
}

export function toGrpcDefinition(def: GrpcServiceDefinition): grpc.ServiceDefinition {
  const out: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const [name, m] of Object.entries(def.methods)) out[name] = m.raw;
  return out;
}

export type ErrorLogger = (err: unknown, method: string) => void;

type AnyCall =
  | grpc.ServerUnaryCall<unknown, unknown>
  | grpc.ServerReadableStream<unknown, unknown>
  | grpc.ServerWritableStream<unknown, unknown>
  | grpc.ServerDuplexStream<unknown, unknown>;

function contextOf(call: AnyCall): CallContext {
  // The AbortController is made on first use: most unary handlers never look at it, and the
  // rate limit hot path should not pay for a controller and a listener per call.
  let controller: AbortController | undefined;
  return {
    header(name: string) {
      const v = call.metadata.get(name)[0];
      return v === undefined ? undefined : typeof v === 'string' ? v : v.toString('utf8');
    },
    get peer() {
      return call.getPeer();
    },
    get signal() {
      if (!controller) {
        const c = (controller = new AbortController());
        if (call.cancelled) c.abort();
        else (call as NodeJS.EventEmitter).once('cancelled', () => c.abort());
      }
      return controller.signal;
    },
  };
}

function toServiceError(err: unknown, method: string, log: ErrorLogger): Partial<grpc.StatusObject> {
  if (err instanceof GrpcError) return { code: err.status, details: err.message };
  log(err, method);
  return { code: GrpcStatus.INTERNAL, details: 'internal error' };
}

function writableOf<Res>(
  call: grpc.ServerWritableStream<unknown, Res> | grpc.ServerDuplexStream<unknown, Res>,
): ServerStream<Res> {
  let cancelled = false;
  call.once('cancelled', () => (cancelled = true));
  return {
    write: (message: Res) => call.write(message),
    drain: () =>
      new Promise<void>((resolve) => {
        if (cancelled) return resolve();
        const done = (): void => {
          call.off('drain', done);
          call.off('cancelled', done);
          resolve();
        };
        call.once('drain', done);
        call.once('cancelled', done);
      }),
    end: () => {
      if (!cancelled) call.end();
    },
    get cancelled() {
      return cancelled;
    },
  };
}

function readableOf<Req>(
  call: grpc.ServerReadableStream<Req, unknown> | grpc.ServerDuplexStream<Req, unknown>,
): AsyncIterable<Req> {
  // Hand-rolled instead of the stream's own async iterator: that one destroys the call when the
  // handler leaves its loop early (a throw, a break), and a destroyed call can no longer send the
  // handler's status to the client. Backpressure: pause past HIGH queued messages.
  const HIGH = 16;
  return {
    [Symbol.asyncIterator](): AsyncIterator<Req> {
      const queue: Req[] = [];
      let ended = false;
      let failure: unknown;
      let wake: (() => void) | undefined;
      const signal = (): void => {
        const w = wake;
        wake = undefined;
        w?.();
      };
      const onData = (message: Req): void => {
        queue.push(message);
        if (queue.length >= HIGH) call.pause();
        signal();
      };
      const onEnd = (): void => {
        ended = true;
        signal();
      };
      const onError = (err: unknown): void => {
        if (!call.cancelled) failure = err;
        ended = true;
        signal();
      };
      const detach = (): void => {
        call.off('data', onData);
        call.off('end', onEnd);
        call.off('error', onError);
        call.off('cancelled', onEnd);
        // Later messages are dropped rather than buffered for a reader that left.
        call.resume();
      };
      call.on('data', onData);
      call.on('end', onEnd);
      call.on('error', onError);
      call.on('cancelled', onEnd);
      return {
        async next(): Promise<IteratorResult<Req>> {
          for (;;) {
            if (queue.length > 0) {
              const value = queue.shift() as Req;
              if (queue.length < HIGH / 4) call.resume();
              return { value, done: false };
            }
            if (failure !== undefined) {
              detach();
              throw failure instanceof Error
                ? failure
                : new Error('request stream failed', { cause: failure });
            }
            if (ended) {
              detach();
              return { value: undefined, done: true };
            }
            await new Promise<void>((resolve) => (wake = resolve));
          }
        },
        async return(): Promise<IteratorResult<Req>> {
          detach();
          return { value: undefined, done: true };
        },
      };
    },
  };
}

/** Wraps one Sluice handler as the grpc-js handler for its method kind. */
export function wrapHandler(
  method: GrpcMethodDefinition,
  name: string,
  handler: MethodHandler,
  log: ErrorLogger,
): grpc.UntypedHandleCall {
  if (!method.requestStream && !method.responseStream) {
    const fn = handler as UnaryHandler;
    return (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      let result: unknown;
      try {
        result = fn(call.request, contextOf(call));
      } catch (err) {
        callback(toServiceError(err, name, log));
        return;
      }
      // Synchronous answers skip a promise turn; the rate limit hot path returns synchronously.
      if (result instanceof Promise) {
        result.then(
          (value) => callback(null, value),
          (err: unknown) => callback(toServiceError(err, name, log)),
        );
      } else callback(null, result);
    };
  }
  if (!method.requestStream && method.responseStream) {
    const fn = handler as ServerStreamHandler;
    return (call: grpc.ServerWritableStream<unknown, unknown>) => {
      const stream = writableOf(call);
      Promise.resolve()
        .then(() => fn(call.request, stream, contextOf(call)))
        .catch((err: unknown) => {
          if (!stream.cancelled)
            call.emit('error', Object.assign(new Error('stream failed'), toServiceError(err, name, log)));
        });
    };
  }
  if (method.requestStream && !method.responseStream) {
    const fn = handler as ClientStreamHandler;
    return (call: grpc.ServerReadableStream<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      Promise.resolve()
        .then(() => fn(readableOf(call), contextOf(call)))
        .then(
          (value) => callback(null, value),
          (err: unknown) => callback(toServiceError(err, name, log)),
        );
    };
  }
  const fn = handler as BidiHandler;
  return (call: grpc.ServerDuplexStream<unknown, unknown>) => {
    const out = writableOf(call);
    const stream: BidiStream<unknown, unknown> = Object.assign(out, {
      [Symbol.asyncIterator]: () => readableOf(call)[Symbol.asyncIterator](),
    });
    Promise.resolve()
      .then(() => fn(stream, contextOf(call)))
      .catch((err: unknown) => {
        if (!out.cancelled)
          call.emit('error', Object.assign(new Error('stream failed'), toServiceError(err, name, log)));
      });
  };
}
