// Starts and stops a grpc-js server on host:port or a unix socket, with optional (mutual) TLS
// and a maximum connection age. grpc-js itself adds the ±10 % jitter to the age and sends a
// GOAWAY when it expires; the grace period bounds how long in-flight calls may finish after that.
// With `reusePort`, several servers (one per front-end thread) listen on the same host:port.

import { lstatSync, unlinkSync } from 'node:fs';
import { createServer, type AddressInfo, type ListenOptions, type Server as NetServer } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { createLogger, type Logger } from '../log.js';
import { reusePortSupported } from '../runtime.js';
import { routeLibraryLogs } from './library-log.js';
import { toGrpcDefinition, wrapHandler, type GrpcServiceBinding } from './service.js';
import { serverSecurity, type GrpcServerTlsOptions } from './tls.js';

export interface GrpcServerOptions {
  host?: string;
  /** 0 picks a free port. Ignored when `uds` is set. */
  port?: number;
  /** Unix domain socket path; replaces host and port. */
  uds?: string;
  tls?: GrpcServerTlsOptions;
  maxConnectionAgeMs?: number;
  maxConnectionAgeGraceMs?: number;
  maxReceiveMessageBytes?: number;
  /**
   * Listen with SO_REUSEPORT, so servers in several threads share host:port and the kernel
   * spreads connections among them. Only where reusePortSupported() (src/core/runtime.ts); ignored
   * with `uds`.
   */
  reusePort?: boolean;
  services: GrpcServiceBinding[];
  log?: Logger;
}

export interface RunningGrpcServer {
  /** Bound TCP port; 0 on a unix socket. */
  readonly port: number;
  /** Address a client can dial: `host:port` or `unix:/path`. */
  readonly address: string;
  /** Stops accepting, lets in-flight calls finish for up to graceMs, then cuts the rest. */
  close(graceMs?: number): Promise<void>;
}

function removeStaleSocket(path: string): void {
  // A socket file left by a killed process makes bind fail with EADDRINUSE.
  try {
    if (lstatSync(path).isSocket()) unlinkSync(path);
  } catch {
    // absent: nothing to remove
  }
}

/**
 * grpc-js 1.14 binds with `http2Server.listen({ host, port })` and has no option for
 * SO_REUSEPORT, so the listening socket is opened here and every accepted connection is handed
 * to the grpc-js server through its public connection injector (which also does the TLS
 * handshake and certificate reloads when the credentials are secure).
 */
async function listenSharedPort(
  server: grpc.Server,
  credentials: grpc.ServerCredentials,
  host: string,
  port: number,
  log: Logger,
): Promise<NetServer> {
  const injector = server.createConnectionInjector(credentials);
  const listener = createServer((socket) => {
    log.debug({ remote: `${socket.remoteAddress}:${socket.remotePort}` }, 'gRPC connection accepted');
    injector.injectConnection(socket);
  });
  // Node 20's types lack `reusePort` (added in Node 22.12 / 23.1).
  const listen: ListenOptions & { reusePort: boolean } = {
    host: host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host,
    port,
    reusePort: true,
  };
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(listen, () => {
      listener.off('error', reject);
      resolve();
    });
  });
  // An accept failure (for example too many open files) is reported, not thrown.
  listener.on('error', (err) => log.error({ err }, 'gRPC listener failed'));
  return listener;
}

function dialHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

export async function startGrpcServer(options: GrpcServerOptions): Promise<RunningGrpcServer> {
  routeLibraryLogs();
  const log = options.log ?? createLogger('grpc');
  const security = serverSecurity(options.tls, (err) => log.warn({ err }, 'gRPC TLS reload skipped'));
  const serverOptions: grpc.ServerOptions = { interceptors: security.interceptors };
  if (options.maxConnectionAgeMs !== undefined && options.maxConnectionAgeMs > 0) {
    serverOptions['grpc.max_connection_age_ms'] = options.maxConnectionAgeMs;
  }
  if (options.maxConnectionAgeGraceMs !== undefined && options.maxConnectionAgeGraceMs > 0) {
    serverOptions['grpc.max_connection_age_grace_ms'] = options.maxConnectionAgeGraceMs;
  }
  if (options.maxReceiveMessageBytes !== undefined)
    serverOptions['grpc.max_receive_message_length'] = options.maxReceiveMessageBytes;

  const server = new grpc.Server(serverOptions);
  const onError = (err: unknown, method: string): void => log.error({ err, method }, 'gRPC handler failed');
  for (const { definition, implementation } of options.services) {
    const handlers: grpc.UntypedServiceImplementation = {};
    for (const [name, handler] of Object.entries(implementation)) {
      const method = definition.methods[name];
      if (!method) throw new Error(`${definition.serviceName} has no method ${name}`);
      handlers[name] = wrapHandler(method, `${definition.serviceName}/${name}`, handler, onError);
    }
    server.addService(toGrpcDefinition(definition), handlers);
  }

  const host = options.host ?? '0.0.0.0';
  const shared = options.reusePort === true && !options.uds;
  if (shared && !reusePortSupported())
    throw new Error(`gRPC reusePort needs Node 22.12+ or 23.1+ on Linux (this is ${process.version})`);
  let listener: NetServer | undefined;
  let port: number;
  try {
    if (shared) {
      listener = await listenSharedPort(server, security.credentials, host, options.port ?? 0, log);
      port = (listener.address() as AddressInfo).port;
    } else {
      let target: string;
      if (options.uds) {
        removeStaleSocket(options.uds);
        target = `unix:${options.uds}`;
      } else {
        target = `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${options.port ?? 0}`;
      }
      port = await new Promise<number>((resolve, reject) => {
        server.bindAsync(target, security.credentials, (err, bound) => (err ? reject(err) : resolve(bound)));
      });
    }
  } catch (err) {
    // Releases the certificate watchers and anything half-bound, so a failed start leaks nothing.
    server.forceShutdown();
    security.dispose();
    throw err;
  }
  const address = options.uds ? `unix:${options.uds}` : `${dialHost(host)}:${port}`;
  log.info({ address, tls: options.tls !== undefined, reusePort: shared }, 'gRPC server listening');

  let closing: Promise<void> | undefined;
  return {
    port: options.uds ? 0 : port,
    address,
    close(graceMs = 5_000) {
      closing ??= new Promise<void>((resolve) => {
        // Stops accepting here first; with reusePort the other threads keep serving the port.
        listener?.close();
        const timer = setTimeout(() => server.forceShutdown(), graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          security.dispose();
          if (options.uds) removeStaleSocket(options.uds);
          resolve();
        });
      });
      return closing;
    },
  };
}
