// A real HTTP server (node:http, free port) that plays the automation API with canned answers
// and records every request, for tests of the client's wire behaviour.
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  json?: unknown;
  body?: string | Buffer;
}

/** Returns a reply, or takes over the raw response itself (streams, stalls) and returns 'handled'. */
export type Handler = (req: Recorded, res: ServerResponse) => Reply | 'handled' | Promise<Reply | 'handled'>;

export interface FakeApi {
  url: string;
  log: Recorded[];
  /** Replaces the canned router until reset(). */
  use(handler: Handler): void;
  reset(): void;
  close(): Promise<void>;
}

export function json(
  reqId: string,
  value: unknown,
  status = 200,
  headers: Record<string, string> = {},
): Reply {
  return { status, headers: { 'x-request-id': reqId, ...headers }, json: value };
}

export function envelope(field: string, message: string, code: string, requestId: string): unknown {
  return { issues: [{ field, message, code, severity: 'error' }], requestId };
}

export const RUN_DONE = {
  id: 'run_1',
  type: 'workflow',
  finished: true,
  sampleRank: 0.42,
  timing: {
    createdAt: '2026-01-01T00:00:00.000Z',
    startedAt: '2026-01-01T00:00:00.010Z',
    completedAt: '2026-01-01T00:00:00.050Z',
    durationMs: 40,
  },
  trigger: { type: 'api', by: 'admin' },
  output: { text: 'HELLO', length: 5 },
  files: [
    { name: 'report.txt', role: 'output', path: 'output/report.txt', contentType: 'text/plain', size: 5 },
  ],
  error: null,
  execution: { status: 'completed', schemaValid: true, batchId: null },
};

// Canned answers per route: shapes follow the reference's JSON (camelCase, envelopes, paging).
function canned(req: Recorded): Reply {
  const p = req.path.replace(/^\/api\/v1/, '');
  const m = req.method;
  const id = 'req-canned';
  if (m === 'GET' && p === '/auth/check')
    return json(id, {
      ok: true,
      tenantId: 'default',
      userId: 'admin',
      keyId: 'k1',
      scope: ['admin'],
      wildcardGranted: true,
    });
  if (m === 'GET' && p === '/automations')
    return json(id, {
      data: [{ id: 'aut_1', type: 'workflow', slug: 'echo-report', name: 'Echo report' }],
      total: 1,
      limit: 20,
      offset: 0,
    });
  if (m === 'POST' && /^\/automations\/[^/]+\/sync$/.test(p)) {
    return json(id, {
      automation: { id: 'aut_1', type: 'workflow', slug: 'echo-report', status: 'active' },
      release: { version: '1.0.0', tag: 'workflows.echo-report@1.0.0', commit: 'abc' },
      warnings: [],
    });
  }
  if (m === 'GET' && /^\/automations\/[^/]+\/versions$/.test(p))
    return json(id, {
      data: [{ id: 'v1', automationId: 'aut_1', version: '1.0.0', isCurrent: true }],
      total: 1,
      limit: 20,
      offset: 0,
    });
  if (m === 'GET' && /^\/automations\/[^/]+\/triggers$/.test(p))
    return json(id, { api: { enabled: true }, manual: { enabled: true }, cron: null, email: null });
  if (/^\/automations\/[^/]+\/dataset\/export$/.test(p))
    return {
      status: 200,
      headers: { 'content-type': 'application/zip' },
      body: Buffer.from([0x50, 0x4b, 0x05, 0x06, 1, 2, 3]),
    };
  if (/\/(input|expected)\/.+/.test(p) && m === 'GET' && p.includes('/examples/'))
    return {
      status: 200,
      headers: { 'content-type': 'application/pdf' },
      body: Buffer.from('%PDF-1.7 bytes'),
    };
  if (/^\/runs\/[^/]+\/artifacts\/.+/.test(p) || /\/reviews\/expected\/.+/.test(p)) {
    if (m === 'GET') return { status: 200, headers: { 'content-type': 'text/plain' }, body: 'HELLO' };
  }
  if (m === 'GET' && /^\/runs\/[^/]+\/artifacts$/.test(p)) {
    if (req.query['zip'] === '1')
      return {
        status: 200,
        headers: { 'content-type': 'application/zip' },
        body: Buffer.from([0x50, 0x4b, 3, 4]),
      };
    return json(id, { artifacts: ['output/report.txt'] });
  }
  if (m === 'GET' && /^\/files\/[^/]+\/content$/.test(p))
    return { status: 200, headers: { 'content-type': 'application/pdf' }, body: Buffer.from('file-bytes') };
  if (/\/experiments(\/[^/]+)?\/export$/.test(p)) {
    return req.query['format'] === 'csv'
      ? {
          status: 200,
          headers: { 'content-type': 'text/csv' },
          body: 'executionId,exampleId,score\nrun_1,ex_1,1\n',
        }
      : {
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: '[{"executionId":"run_1","score":1}]',
        };
  }
  if (m === 'GET' && /^\/runs\/[^/]+$/.test(p)) return json(id, RUN_DONE);
  if (m === 'DELETE' && /\/(input|expected)\/.+/.test(p)) return { status: 204 };
  return json(id, { ok: true, method: m, path: p });
}

export async function startFakeApi(): Promise<FakeApi> {
  const log: Recorded[] = [];
  let override: Handler | undefined;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const rec: Recorded = {
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      log.push(rec);
      void Promise.resolve((override ?? canned)(rec, res)).then((reply) => {
        if (reply === 'handled') return;
        const headers: Record<string, string> = { ...(reply.headers ?? {}) };
        let body: string | Buffer | undefined = reply.body;
        if (reply.json !== undefined) {
          headers['content-type'] ??= 'application/json';
          body = JSON.stringify(reply.json);
        }
        res.writeHead(reply.status ?? 200, headers);
        res.end(body);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    use(handler) {
      override = handler;
    },
    reset() {
      override = undefined;
      log.length = 0;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Parses a recorded multipart body with the platform's own parser. */
export async function formOf(rec: Recorded): Promise<FormData> {
  return new Response(rec.body, {
    headers: { 'content-type': String(rec.headers['content-type']) },
  }).formData();
}
