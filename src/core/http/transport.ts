// Which transport serves HTTP, decided once per thread: a uWebSockets.js build that loads for
// the running Node and C library (tried in order among the installed ones, never downloaded),
// else node:http. SLUICE_HTTP_TRANSPORT forces one; forcing uws when no build loads is an error
// that stops the start. See docs/architecture.md, "HTTP transports".

import { reusePortSupported } from '../runtime.js';
import type { HttpTransportSetting } from '../settings/index.js';
import { loadUwsBuild, type UwsBuild } from './uws.js';

export interface TransportInfo {
  readonly transport: 'uws' | 'node';
  /** The uWS package that serves (uws only). */
  readonly build?: string;
  /** Its version (uws only). */
  readonly version?: string;
  /**
   * Whether several front-end threads can listen on one port: uWS sets SO_REUSEPORT itself;
   * node:http can from Node 22.12 / 23.1 (net.Server.listen's `reusePort`).
   */
  readonly sharedPort: boolean;
}

export type ResolvedTransport =
  | { readonly info: TransportInfo; readonly uws: UwsBuild }
  | { readonly info: TransportInfo; readonly uws?: undefined };

let uwsAttempt: UwsBuild | { failures: string[] } | undefined;

function tryUws(): UwsBuild | { failures: string[] } {
  uwsAttempt ??= loadUwsBuild();
  return uwsAttempt;
}

/** The transport for `setting`; throws when `uws` is forced and no build loads. */
export function resolveTransport(setting: HttpTransportSetting): ResolvedTransport {
  if (setting !== 'node') {
    const attempt = tryUws();
    if ('uws' in attempt) {
      return {
        uws: attempt,
        info: Object.freeze({
          transport: 'uws' as const,
          build: attempt.build,
          version: attempt.version,
          sharedPort: true,
        }),
      };
    }
    if (setting === 'uws') {
      throw new Error(
        `SLUICE_HTTP_TRANSPORT=uws, but no uWebSockets.js build loads on Node ${process.version} ` +
          `(${process.platform}-${process.arch}, ABI ${process.versions.modules}): ${attempt.failures.join('; ')}. ` +
          'Unset SLUICE_HTTP_TRANSPORT (or set it to node) to serve with node:http.',
      );
    }
  }
  return { info: Object.freeze({ transport: 'node' as const, sharedPort: reusePortSupported() }) };
}

/** One line for the start banner. */
export function describeTransport(info: TransportInfo): string {
  if (info.transport === 'uws') return `uws (${info.build} ${info.version})`;
  return `node (node:http ${process.version}${info.sharedPort ? ', reusePort' : ', one listening thread'})`;
}

/** The URL to print for a listener (a wildcard host shown as loopback). */
/** The URL of the address a server is bound to, as given (0.0.0.0 and :: stay), for the banner. */
export function bindUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export function displayUrl(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}
