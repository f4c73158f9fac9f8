// Small clients for tests, the CLI and load generators: a unary caller and a bidirectional
// stream (used by xDS clients), both over protobufjs codecs. Channels are created per client;
// close() releases the connection.

import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { GrpcError, GrpcStatus } from './errors.js';
import { routeLibraryLogs } from './library-log.js';
import type { GrpcMethodDefinition, GrpcServiceDefinition } from './service.js';

export interface GrpcClientTlsOptions {
  /** CA that signed the server certificate; system roots when absent. */
  caFile?: string;
  /** Client certificate and key for mutual TLS. */
  certFile?: string;
  keyFile?: string;
  /** Name to verify in the server certificate instead of the dialled host. */
  serverName?: string;
}

export interface GrpcClientOptions {
  tls?: GrpcClientTlsOptions;
  /** Extra grpc-js channel options (for example `grpc.use_local_subchannel_pool`). */
  channelOptions?: Record<string, string | number>;
  maxReceiveMessageBytes?: number;
}

export interface CallOptions {
  timeoutMs?: number;
  metadata?: Record<string, string>;
}

export interface UnaryClient<Req, Res> {
  call(request: Req, options?: CallOptions): Promise<Res>;
  /** Resolves when the channel is connected, rejects after timeoutMs. */
  waitForReady(timeoutMs: number): Promise<void>;
  close(): void;
}

export interface BidiClientStream<Req, Res> extends AsyncIterable<Res> {
  write(message: Req): boolean;
  end(): void;
  cancel(): void;
}

function credentialsOf(tls: GrpcClientTlsOptions | undefined): grpc.ChannelCredentials {
  if (!tls) return grpc.credentials.createInsecure();
  const ca = tls.caFile ? readFileSync(tls.caFile) : null;
  const key = tls.keyFile ? readFileSync(tls.keyFile) : null;
  const cert = tls.certFile ? readFileSync(tls.certFile) : null;
  return grpc.credentials.createSsl(ca, key, cert);
}

function methodOf(service: GrpcServiceDefinition, name: string): GrpcMethodDefinition {
  const method = service.methods[name];
  if (!method) throw new Error(`${service.serviceName} has no method ${name}`);
  return method;
}

function metadataOf(values: Record<string, string> | undefined): grpc.Metadata {
  const md = new grpc.Metadata();
  if (values) for (const [k, v] of Object.entries(values)) md.set(k, v);
  return md;
}

function toGrpcError(err: grpc.ServiceError): GrpcError {
  return new GrpcError(err.code ?? GrpcStatus.UNKNOWN, err.details || err.message);
}

function makeClient(address: string, options: GrpcClientOptions): grpc.Client {
  routeLibraryLogs();
  const channelOptions: grpc.ChannelOptions = { ...options.channelOptions };
  if (options.tls?.serverName) channelOptions['grpc.ssl_target_name_override'] = options.tls.serverName;
  if (options.maxReceiveMessageBytes !== undefined)
    channelOptions['grpc.max_receive_message_length'] = options.maxReceiveMessageBytes;
  return new grpc.Client(address, credentialsOf(options.tls), channelOptions);
}

/** A caller for one unary method. `address` is `host:port` or `unix:/path`. */
export function createUnaryClient<Req = unknown, Res = unknown>(
  address: string,
  service: GrpcServiceDefinition,
  methodName: string,
  options: GrpcClientOptions = {},
): UnaryClient<Req, Res> {
  const method = methodOf(service, methodName);
  if (method.requestStream || method.responseStream) throw new Error(`${method.path} is not unary`);
  const client = makeClient(address, options);
  const serialize = method.raw.requestSerialize as (value: Req) => Buffer;
  const deserialize = method.raw.responseDeserialize as (bytes: Buffer) => Res;
  return {
    call(request, callOptions = {}) {
      const opts: grpc.CallOptions = {};
      if (callOptions.timeoutMs !== undefined) opts.deadline = Date.now() + callOptions.timeoutMs;
      return new Promise<Res>((resolve, reject) => {
        client.makeUnaryRequest(
          method.path,
          serialize,
          deserialize,
          request,
          metadataOf(callOptions.metadata),
          opts,
          (err, value) => {
            if (err) reject(toGrpcError(err));
            else resolve(value as Res);
          },
        );
      });
    },
    waitForReady(timeoutMs) {
      return new Promise<void>((resolve, reject) => {
        client.waitForReady(Date.now() + timeoutMs, (err) => (err ? reject(err) : resolve()));
      });
    },
    close() {
      client.close();
    },
  };
}

/** Calls a server-streaming method; responses are read with `for await`, close() cancels. */
export function openServerStream<Req = unknown, Res = unknown>(
  address: string,
  service: GrpcServiceDefinition,
  methodName: string,
  request: Req,
  options: GrpcClientOptions & { metadata?: Record<string, string> } = {},
): AsyncIterable<Res> & { close(): void } {
  const method = methodOf(service, methodName);
  if (method.requestStream || !method.responseStream)
    throw new Error(`${method.path} is not server-streaming`);
  const client = makeClient(address, options);
  const call = client.makeServerStreamRequest(
    method.path,
    method.raw.requestSerialize,
    method.raw.responseDeserialize as (bytes: Buffer) => Res,
    request,
    metadataOf(options.metadata),
  );
  return {
    close: () => {
      call.cancel();
      client.close();
    },
    [Symbol.asyncIterator]: () => iterate<Res>(call),
  };
}

async function* iterate<Res>(call: AsyncIterable<unknown>): AsyncGenerator<Res> {
  try {
    for await (const message of call) yield message as Res;
  } catch (err) {
    const e = err as grpc.ServiceError;
    if (Number(e.code) === GrpcStatus.CANCELLED) return;
    throw typeof e.code === 'number' ? toGrpcError(e) : err;
  }
}

/** A client-streaming call: write requests, then `finish()` half-closes and awaits the answer. */
export function openClientStream<Req = unknown, Res = unknown>(
  address: string,
  service: GrpcServiceDefinition,
  methodName: string,
  options: GrpcClientOptions & { metadata?: Record<string, string> } = {},
): { write(message: Req): boolean; finish(): Promise<Res>; close(): void } {
  const method = methodOf(service, methodName);
  if (!method.requestStream || method.responseStream)
    throw new Error(`${method.path} is not client-streaming`);
  const client = makeClient(address, options);
  let settle!: { resolve: (v: Res) => void; reject: (e: unknown) => void };
  const answer = new Promise<Res>((resolve, reject) => (settle = { resolve, reject }));
  // Handled here so a failure before finish() is not an unhandled rejection; finish() returns it.
  answer.catch(() => undefined);
  const call = client.makeClientStreamRequest(
    method.path,
    method.raw.requestSerialize,
    method.raw.responseDeserialize as (bytes: Buffer) => Res,
    metadataOf(options.metadata),
    (err, value) => (err ? settle.reject(toGrpcError(err)) : settle.resolve(value as Res)),
  );
  return {
    write: (message) => call.write(message),
    finish() {
      call.end();
      return answer;
    },
    close() {
      call.cancel();
      client.close();
    },
  };
}

/** Opens one bidirectional stream; responses are read with `for await`. */
export function openBidiStream<Req = unknown, Res = unknown>(
  address: string,
  service: GrpcServiceDefinition,
  methodName: string,
  options: GrpcClientOptions & { metadata?: Record<string, string> } = {},
): BidiClientStream<Req, Res> & { close(): void } {
  const method = methodOf(service, methodName);
  if (!method.requestStream || !method.responseStream) throw new Error(`${method.path} is not bidirectional`);
  const client = makeClient(address, options);
  const call = client.makeBidiStreamRequest(
    method.path,
    method.raw.requestSerialize,
    method.raw.responseDeserialize as (bytes: Buffer) => Res,
    metadataOf(options.metadata),
  );
  return {
    write: (message) => call.write(message),
    end: () => call.end(),
    cancel: () => call.cancel(),
    close: () => {
      call.cancel();
      client.close();
    },
    [Symbol.asyncIterator]: () => iterate<Res>(call),
  };
}
