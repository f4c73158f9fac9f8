// The pull-metrics listener (PULLMETRICS_ADDR, PULLMETRICS_PATH). A plain node:http server: it
// answers one GET per scrape interval, must stay reachable without credentials like any
// Prometheus target, and has nothing to gain from the uWS front end.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../../../core/log.js';
import type { MappingRule } from './prom-mapping.js';
import { renderPrometheus } from './prom-render.js';

export interface PullServerOptions {
  host: string;
  port: number;
  path: string;
  rules: readonly MappingRule[];
  extraTags: Readonly<Record<string, string>>;
  snapshot: () => ReadonlyMap<string, number>;
  log?: Logger;
}

export interface RunningPullServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

export async function startPullServer(options: PullServerOptions): Promise<RunningPullServer> {
  const reported = new Set<string>();
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== options.path) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: 'not found', path }));
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res
        .writeHead(405, { allow: 'GET, HEAD', 'content-type': 'application/json' })
        .end(JSON.stringify({ error: 'method not allowed' }));
      return;
    }
    renderPrometheus(options.snapshot(), options.rules, options.extraTags).then(
      (result) => {
        for (const name of result.conflicts) {
          if (reported.has(name)) continue;
          reported.add(name);
          options.log?.warn(
            { stat: name },
            'statistic left out of the pull metrics: its mapped name already has another type',
          );
        }
        res.writeHead(200, { 'content-type': result.contentType });
        res.end(req.method === 'HEAD' ? undefined : result.text);
      },
      (err: unknown) => {
        options.log?.error({ err }, 'rendering pull metrics failed');
        res
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: 'metrics rendering failed' }));
      },
    );
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host =
    options.host === '0.0.0.0' || options.host === ''
      ? '127.0.0.1'
      : options.host.includes(':')
        ? `[${options.host}]`
        : options.host;
  const url = `http://${host}:${port}${options.path}`;
  options.log?.info({ url }, 'pull metrics listening');
  return {
    url,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
