// One fuzz case from (seed, index): a route of one service, then a method, path, query, headers
// and body, each either valid-ish (from the seeds) or mutated. About one case in sixteen goes
// out as raw bytes with damage node's client refuses to send.

import { bigBody, mutateBytes, mutateValue, oddQuery, oddSegment, randomBody } from './mutate.js';
import { Prng } from './prng.js';
import type { FuzzRoute, Json, ServiceName } from './routes.js';
import { sample } from './schema.js';
import type { Seeds } from './seeds.js';
import type { Wire } from './send.js';

export interface Endpoint {
  readonly host: string;
  readonly port: number;
}

export interface CaseContext {
  readonly seed: number;
  readonly token: string;
  readonly endpoints: Partial<Record<ServiceName, Endpoint>>;
  readonly routes: readonly FuzzRoute[];
  readonly components: Record<string, Json>;
  readonly seeds: Seeds;
  /** How many bodies of several MiB may still be sent. */
  readonly bigBodies: { left: number; used: number };
}

export interface FuzzCase {
  readonly index: number;
  readonly service: ServiceName;
  /** The route the case was made from: `METHOD pattern`. */
  readonly route: string;
  readonly wire: Wire;
  /** Set for raw cases: the exact bytes sent. */
  readonly raw?: Buffer;
  /**
   * Refused by uWebSockets.js's parser before any of our code runs: not valid HTTP/1.1, or past
   * its fixed limits (a method outside its list, more than about 47 header fields, a request line
   * plus headers over 4 KiB, which it drops when they span more than one socket read — its
   * fallback buffer for a split header block is 4 KiB — and answers otherwise). See oracle.ts.
   */
  readonly malformed: boolean;
  readonly notes: readonly string[];
}

/** uWS keeps at most 4 KiB of a header block that arrives over several reads. */
const UWS_SPLIT_HEADER_LIMIT = 4 * 1024;

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'PURGE'];
/** Methods uWebSockets.js's parser knows; it closes the connection on any other. */
const PARSER_METHODS = new Set([
  'GET',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'HEAD',
  'OPTIONS',
  'TRACE',
  'CONNECT',
]);
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'APPLICATION/JSON',
  'application/vnd.streams.json.v2+json',
  'text/plain',
  'text/yaml',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'multipart/form-data; boundary=',
  'multipart/form-data; boundary=b',
  'application/zip',
  'application/octet-stream',
  '',
  ';;;',
  'application/json, text/plain',
  'x/'.padEnd(9000, 'y'),
];
const ACCEPTS = [
  '*/*',
  'application/json',
  'text/html',
  'application/xml',
  'application/vnd.streams.json.v2+json;q=0',
  '',
  ',,,',
  'a'.repeat(5000),
];

export function makeCase(ctx: CaseContext, index: number): FuzzCase {
  const rng = Prng.forCase(ctx.seed, index);
  // A service first, then one of its routes: the rate limit service's two routes get as many
  // cases as the automation service's sixty.
  const service = rng.pick([...new Set(ctx.routes.map((r) => r.service))]);
  const route = rng.pick(ctx.routes.filter((r) => r.service === service));
  const endpoint = ctx.endpoints[route.service]!;
  const notes: string[] = [];

  // A large body goes with everything else valid (real ids, a good key, the route's method and
  // content type), so that the service reads it instead of refusing the request first.
  if (route.bodyTypes.length > 0 && ctx.bigBodies.left > 0 && rng.chance(0.02)) {
    const big = bigBody(ctx.bigBodies);
    const target = makePath(route, rng, ctx.seeds, [], true);
    const headers = { authorization: `Bearer ${ctx.token}`, 'content-type': route.bodyTypes[0]! };
    const wire: Wire = { ...endpoint, method: route.method, target, headers, body: big.body };
    return {
      index,
      service: route.service,
      route: `${route.method} ${route.pattern}`,
      wire,
      malformed: false,
      notes: [big.note],
    };
  }

  let method = route.method;
  if (rng.chance(0.12)) {
    method = rng.pick(METHODS);
    if (method !== route.method) notes.push(`method ${method}`);
  }

  const target = makePath(route, rng, ctx.seeds, notes) + makeQuery(route, rng, ctx, notes);
  const headers = makeHeaders(route, rng, ctx.token, notes);
  const body = makeBody(route, method, rng, ctx, headers, notes);
  const wire: Wire = {
    host: endpoint.host,
    port: endpoint.port,
    method,
    target,
    headers,
    ...(body ? { body } : {}),
  };
  const headerBytes =
    method.length +
    target.length +
    11 +
    Object.entries(headers).reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
  const beyondParser =
    !PARSER_METHODS.has(method) || Object.keys(headers).length > 40 || headerBytes > UWS_SPLIT_HEADER_LIMIT;

  if (rng.chance(1 / 16)) {
    const { bytes, malformed, note } = rawDamage(wire, rng);
    notes.push(note);
    return {
      index,
      service: route.service,
      route: `${route.method} ${route.pattern}`,
      wire,
      raw: bytes,
      malformed: malformed || beyondParser,
      notes,
    };
  }
  return {
    index,
    service: route.service,
    route: `${route.method} ${route.pattern}`,
    wire,
    malformed: beyondParser,
    notes,
  };
}

function makePath(route: FuzzRoute, rng: Prng, seeds: Seeds, notes: string[], real = false): string {
  const segments = route.pattern.split('/').slice(1);
  const out: string[] = [];
  let previous = '';
  for (const seg of segments) {
    if (seg.startsWith(':') || seg === '*') {
      const name = seg === '*' ? 'path' : seg.slice(1);
      const pool = seeds.params.get(`${previous}/${name}`) ?? [];
      if (pool.length > 0 && (real || rng.chance(0.75))) {
        const value = rng.pick(pool);
        out.push(
          seg === '*' ? value.split('/').map(encodeURIComponent).join('/') : encodeURIComponent(value),
        );
      } else {
        const odd =
          seg === '*' && rng.chance(0.3)
            ? rng.pick(['a/b/../c', '../../..', 'a//b', 'x/%2e%2e/y'])
            : oddSegment(rng);
        out.push(odd);
        notes.push(
          `${name}=${odd.length > 40 ? `${odd.slice(0, 20)}…(${odd.length} chars)` : JSON.stringify(odd)}`,
        );
      }
    } else {
      previous = seg;
      out.push(rng.chance(0.02) ? seg.toUpperCase() : seg);
    }
  }
  let path = '/' + out.join('/');
  if (!real && rng.chance(0.08)) {
    const kind = rng.int(0, 4);
    if (kind === 0) path += '/';
    else if (kind === 1) path = path.replace('/', '//');
    else if (kind === 2) path = '/..' + path;
    else if (kind === 3) path += '/' + oddSegment(rng);
    else path = '/' + oddSegment(rng) + '/' + oddSegment(rng);
    notes.push(
      `path shape ${['trailing slash', 'double slash', '/.. prefix', 'extra segment', 'random path'][kind]}`,
    );
  }
  return path;
}

function makeQuery(route: FuzzRoute, rng: Prng, ctx: CaseContext, notes: string[]): string {
  const parts: string[] = [];
  if (route.query.length > 0 && rng.chance(0.5)) {
    for (const q of route.query) {
      if (!rng.chance(0.3)) continue;
      const value = sample(q.schema, rng, { components: ctx.components, strings: ctx.seeds.strings }, q.name);
      parts.push(
        `${encodeURIComponent(q.name)}=${encodeURIComponent(typeof value === 'string' ? value : JSON.stringify(value))}`,
      );
    }
  }
  if (rng.chance(0.2)) {
    const odd = oddQuery(rng);
    parts.push(odd);
    notes.push(`query ${odd.length > 60 ? odd.slice(0, 40) + `…(${odd.length} chars)` : odd}`);
  }
  return parts.length > 0 ? '?' + parts.join('&') : '';
}

function makeHeaders(route: FuzzRoute, rng: Prng, token: string, notes: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  const auth = rng.next();
  if (auth < 0.85) headers['authorization'] = `Bearer ${token}`;
  else {
    const odd = rng.pick([
      undefined,
      'Bearer',
      'Bearer ',
      'bearer ' + token,
      'Basic dXNlcjpwYXNz',
      'Bearer sk_nothing_here',
      `Bearer ${token}x`,
      `Bearer ${token} extra`,
      'Bearer ' + 'A'.repeat(20_000),
      `Bearer: ${token}`,
    ]);
    if (odd !== undefined) headers['authorization'] = odd;
    notes.push(`authorization ${odd === undefined ? 'missing' : JSON.stringify(odd.slice(0, 30))}`);
  }
  if (rng.chance(0.1)) {
    const accept = rng.pick(ACCEPTS);
    headers['accept'] = accept;
    notes.push(`accept ${JSON.stringify(accept.slice(0, 40))}`);
  }
  if (rng.chance(0.04)) {
    const size = rng.pick([8 * 1024, 32 * 1024, 60 * 1024]);
    headers['x-fuzz-padding'] = 'p'.repeat(size);
    notes.push(`${size}-byte header`);
  }
  if (rng.chance(0.03)) {
    for (let i = 0; i < 100; i++) headers[`x-fuzz-${i}`] = String(i);
    notes.push('100 extra headers');
  }
  if (rng.chance(0.04)) {
    const id = rng.pick(['', ' ', 'x'.repeat(4000), '"quoted"', '\\n']);
    headers['x-request-id'] = id;
    notes.push(`x-request-id ${JSON.stringify(id.slice(0, 20))}`);
  }
  if (route.public && headers['authorization'] === undefined) notes.push('(public route)');
  return headers;
}

function makeBody(
  route: FuzzRoute,
  method: string,
  rng: Prng,
  ctx: CaseContext,
  headers: Record<string, string>,
  notes: string[],
): Buffer | undefined {
  const wantsBody = route.bodyTypes.length > 0 || method === 'POST' || method === 'PUT' || method === 'PATCH';
  if (!wantsBody && !rng.chance(0.05)) return undefined;
  const type =
    route.bodyTypes.length > 0 && rng.chance(0.85) ? rng.pick(route.bodyTypes) : rng.pick(CONTENT_TYPES);
  if (type !== '' || rng.chance(0.5)) headers['content-type'] = type;
  if (!route.bodyTypes.includes(type)) notes.push(`content-type ${JSON.stringify(type.slice(0, 40))}`);

  const seeds = ctx.seeds.bodies.get(`${route.service} ${route.method} ${route.pattern}`);
  let seed: unknown =
    seeds && seeds.length > 0
      ? rng.pick(seeds)
      : route.bodySchema
        ? sample(route.bodySchema, rng, { components: ctx.components, strings: ctx.seeds.strings })
        : {};
  const mode = rng.next();
  if (mode < 0.1) {
    notes.push('no body');
    return undefined;
  }
  if (mode < 0.4) {
    // Seed as it is (a multipart route gets it as form fields).
  } else if (mode < 0.65) {
    for (let i = rng.int(1, 2); i > 0; i--) {
      const m = mutateValue(seed, rng);
      seed = m.value;
      notes.push(m.note);
    }
  } else if (mode < 0.85) {
    const m = mutateBytes(encode(seed, type, headers), rng);
    notes.push(m.note);
    return m.body;
  } else {
    const m = randomBody(rng);
    notes.push(m.note);
    return m.body;
  }
  return Buffer.from(encode(seed, type, headers));
}

/** JSON, or form fields plus one file part when the content type is multipart. */
function encode(value: unknown, type: string, headers: Record<string, string>): string {
  if (!type.startsWith('multipart/form-data')) return JSON.stringify(value) ?? 'null';
  const boundary = 'fuzzboundary';
  headers['content-type'] = `multipart/form-data; boundary=${boundary}`;
  const parts: string[] = [];
  const fields =
    value && typeof value === 'object' && !Array.isArray(value) ? Object.entries(value) : [['value', value]];
  for (const [k, v] of fields)
    parts.push(
      `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${typeof v === 'string' ? v : JSON.stringify(v)}\r\n`,
    );
  parts.push(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="fuzz.txt"\r\nContent-Type: text/plain\r\n\r\nfuzz\r\n`,
  );
  return parts.join('') + `--${boundary}--\r\n`;
}

/** A request node's client would refuse: the same case, damaged at the HTTP level. */
function rawDamage(wire: Wire, rng: Prng): { bytes: Buffer; malformed: boolean; note: string } {
  const host = `${wire.host}:${wire.port}`;
  const body = wire.body ?? Buffer.alloc(0);
  const lines = (target: string, extra: string[] = [], version = 'HTTP/1.1', hostLine = true) =>
    Buffer.concat([
      Buffer.from(
        [
          `${wire.method} ${target} ${version}`,
          ...(hostLine ? [`host: ${host}`] : []),
          ...Object.entries(wire.headers).map(([k, v]) => `${k}: ${v}`),
          'connection: close',
          `content-length: ${body.length}`,
          ...extra,
        ].join('\r\n') + '\r\n\r\n',
        'latin1',
      ),
      body,
    ]);
  switch (rng.int(0, 10)) {
    case 0: // obs-text in a field value is valid HTTP (RFC 9110 §5.5)
      return {
        bytes: lines(wire.target, ['x-obs: caf\xe9 \xff\xfe']),
        malformed: false,
        note: 'raw: obs-text header value',
      };
    case 1:
      return {
        bytes: lines(wire.target.split('?')[0] + '/\xff\xfe\x80'),
        malformed: true,
        note: 'raw: non-ASCII bytes in the path',
      };
    case 2:
      return {
        bytes: lines(wire.target.replace(/\/([^/]*)$/, '/a b$1')),
        malformed: true,
        note: 'raw: space in the path',
      };
    case 3:
      return {
        bytes: lines(wire.target, ['x-ctl: a\x01b\x7f']),
        malformed: true,
        note: 'raw: control characters in a header',
      };
    case 4:
      return {
        bytes: lines(wire.target, ['bad header: x']),
        malformed: true,
        note: 'raw: space in a header name',
      };
    case 5:
      return {
        bytes: lines(wire.target, [], 'HTTP/1.1', false),
        malformed: true,
        note: 'raw: no Host header',
      };
    case 6:
      return { bytes: lines(wire.target, [], 'HTTP/1.0'), malformed: true, note: 'raw: HTTP/1.0' };
    case 7:
      return {
        bytes: lines(`http://${host}${wire.target}`),
        malformed: true,
        note: 'raw: absolute-form target',
      };
    case 8:
      return {
        bytes: Buffer.from(
          `${wire.method} ${wire.target} HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\ntransfer-encoding: chunked\r\n` +
            Object.entries(wire.headers)
              .map(([k, v]) => `${k}: ${v}\r\n`)
              .join('') +
            '\r\nzz\r\nabc\r\n0\r\n\r\n',
          'latin1',
        ),
        malformed: true,
        note: 'raw: bad chunk size',
      };
    case 9:
      return {
        bytes: lines(wire.target, [`content-length: ${Math.max(0, body.length - 1)}`]),
        malformed: true,
        note: 'raw: two different Content-Length values',
      };
    default:
      return {
        bytes: Buffer.from(lines(wire.target).toString('latin1').replace(/\r\n/g, '\n'), 'latin1'),
        malformed: true,
        note: 'raw: bare LF line ends',
      };
  }
}
