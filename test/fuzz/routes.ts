// The routes to fuzz, from the services' own route tables, so a new route is fuzzed without
// touching this suite. The rate limit and streams routers are built here with inert
// dependencies: registering a route only stores its handler, and the fuzzer never calls one
// in this process. The automation routes come from the service's OpenAPI document, which is
// built from its route table (src/automation/openapi/document.ts) and carries the body and
// query schemas the generator starts from.

import type { Router } from '../../src/core/http/index.js';
import { ratelimitRouter } from '../../src/ratelimit/server/http.js';
import { buildRouter } from '../../src/streams/http/routes.js';

export type ServiceName = 'ratelimit' | 'streams' | 'automation';
export const SERVICES: readonly ServiceName[] = ['ratelimit', 'streams', 'automation'];

export type Json = Record<string, unknown>;

export interface FuzzRoute {
  readonly service: ServiceName;
  readonly method: string;
  /** Router form: `:name` segments and a trailing `*`. */
  readonly pattern: string;
  readonly public: boolean;
  /** Content types the route documents for its body ([] when unknown or none). */
  readonly bodyTypes: readonly string[];
  /** JSON Schema of an application/json body, when documented. */
  readonly bodySchema?: Json;
  readonly query: readonly { name: string; schema: Json }[];
}

export interface RouteTable {
  readonly routes: readonly FuzzRoute[];
  /** OpenAPI components, for resolving `$ref` in schemas. */
  readonly components: Record<string, Json>;
}

const inert = {} as never;

function fromRouter(service: ServiceName, router: Router, bodyTypes: readonly string[]): FuzzRoute[] {
  const out: FuzzRoute[] = router.routes().map((r) => ({
    service,
    method: r.method,
    pattern: r.pattern,
    public: r.options.scope === false,
    bodyTypes: r.method === 'GET' || r.method === 'DELETE' ? [] : bodyTypes,
    query: [],
  }));
  // A WebSocket route also answers plain GETs (without an upgrade) at its path.
  for (const ws of router.webSocketRoutes())
    out.push({
      service,
      method: 'GET',
      pattern: ws.pattern,
      public: ws.options.scope === false,
      bodyTypes: [],
      query: [],
    });
  return out;
}

export function ratelimitRoutes(): FuzzRoute[] {
  return fromRouter('ratelimit', ratelimitRouter(inert, inert), ['application/json']);
}

export function streamsRoutes(): FuzzRoute[] {
  const deps = { log: {}, groups: {}, settings: {}, partitioner: {}, baseUrl: () => '' } as never;
  return fromRouter('streams', buildRouter(deps), [
    'application/vnd.streams.json.v2+json',
    'application/json',
  ]);
}

/** Reads GET /api/v1/openapi.json (a public route) of a running automation service. */
export async function automationRoutes(baseUrl: string): Promise<RouteTable> {
  const res = await fetch(`${baseUrl}/api/v1/openapi.json`);
  if (res.status !== 200) throw new Error(`GET ${baseUrl}/api/v1/openapi.json answered ${res.status}`);
  const doc = (await res.json()) as {
    paths: Record<string, Record<string, Json>>;
    components?: { schemas?: Record<string, Json> };
  };
  const routes: FuzzRoute[] = [
    {
      service: 'automation',
      method: 'GET',
      pattern: '/api/v1/openapi.json',
      public: true,
      bodyTypes: [],
      query: [],
    },
  ];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const params = (op['parameters'] as { name: string; in: string; schema: Json }[] | undefined) ?? [];
      const content = ((op['requestBody'] as Json | undefined)?.['content'] ?? {}) as Record<string, Json>;
      const jsonSchema = content['application/json']?.['schema'] as Json | undefined;
      const security = op['security'] as unknown[] | undefined;
      routes.push({
        service: 'automation',
        method: method.toUpperCase(),
        // A trailing {path} takes the rest of the path (src/automation/http/api.ts).
        pattern: path.replace(/\/\{path\}$/, '/*').replace(/\{(\w+)\}/g, ':$1'),
        public:
          security?.some((s) => typeof s === 'object' && s !== null && Object.keys(s).length === 0) ?? false,
        bodyTypes: Object.keys(content),
        ...(jsonSchema ? { bodySchema: jsonSchema } : {}),
        query: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema })),
      });
    }
  }
  return { routes, components: doc.components?.schemas ?? {} };
}
