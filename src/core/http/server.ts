// startHttpServer: the one entry point services use. It picks the transport (transport.ts) and
// lets it serve the router through the shared core (dispatch.ts), so routing, auth, body limits,
// errors and the draining close behave the same on uWS and on node:http.

import type { Logger } from '../log.js';
import type { Authenticator } from '../auth/types.js';
import { loadHttpTransportSetting, type HttpTransportSetting } from '../settings/index.js';
import { HttpCore } from './dispatch.js';
import { startNodeServer } from './node.js';
import type { CorsPolicy } from './cors.js';
import type { RequestObserver } from './observer.js';
import type { Router } from './router.js';
import { resolveTransport, type TransportInfo } from './transport.js';
import type { ErrorBodyFactory } from './types.js';
import { startUwsServer } from './uws.js';

export interface HttpServerOptions {
  /** Service name, used in logs. */
  name: string;
  host: string;
  /** 0 picks a free port. */
  port: number;
  router: Router;
  errorBody: ErrorBodyFactory;
  /** Default request body limit (bytes); routes may override. Default 1 MiB. */
  maxBodyBytes?: number;
  /** When given, every route requires a bearer key unless its options say `scope: false`. */
  authenticator?: Authenticator;
  /** Scope required by routes that name none; a function may pick it by method. */
  defaultScope?: string | false | ((method: string) => string | false);
  log?: Logger;
  /** Origins of other pages allowed to call this server (the console under `sluice serve`). */
  cors?: CorsPolicy;
  /** The transport (default: SLUICE_HTTP_TRANSPORT, unset = auto). */
  transport?: HttpTransportSetting;
  /**
   * The front-end thread starting this server, for a server that runs on every thread on one
   * port: where the transport cannot share a port between threads (node:http before Node
   * 22.12), only thread 0 listens and the others get a handle that is not listening.
   */
  thread?: number;
  /** Told of every request and WebSocket (metrics, access log: src/core/observe). */
  observer?: RequestObserver | undefined;
}

export interface HttpServerHandle {
  readonly host: string;
  readonly port: number;
  readonly url: string;
  /** False on a thread > 0 whose transport cannot share the port (see HttpServerOptions.thread). */
  readonly listening: boolean;
  readonly transport: TransportInfo;
  /** Stops listening, lets in-flight requests finish for up to `graceMs`, then closes what is left. */
  close(graceMs?: number): Promise<void>;
}

export async function startHttpServer(options: HttpServerOptions): Promise<HttpServerHandle> {
  const resolved = resolveTransport(options.transport ?? loadHttpTransportSetting());
  const core = new HttpCore(options);
  if (resolved.uws) return startUwsServer(core, options, resolved.uws, resolved.info);
  if (options.thread !== undefined && options.thread > 0 && !resolved.info.sharedPort) {
    return {
      host: options.host,
      port: options.port,
      url: '',
      listening: false,
      transport: resolved.info,
      close: async () => undefined,
    };
  }
  return startNodeServer(core, options, resolved.info);
}
