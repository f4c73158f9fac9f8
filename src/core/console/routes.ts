// The web console on a service's HTTP port: /console/ (the page and its files), /console/config.json
// (which services this process serves and where their APIs are) and /console/whoami (who the key
// in use belongs to). With `sluice serve` the automation port serves it with every section, and
// the streams and rate limit ports let that page call them (CORS for the console's origin only);
// a service run alone serves it with its own section. docs/console.md, docs/security.md.

import { AUTH_CHALLENGE, parseAuthorization } from '../auth/credentials.js';
import { consoleOriginPolicy, hostName, type CorsPolicy } from '../http/cors.js';
import type { HttpRequest, HttpResponse, Router } from '../http/index.js';
import type { ServiceContext, ServiceName } from '../service.js';
import { ConsoleAssets } from './assets.js';

/** Section order in the console. */
const ORDER: readonly ServiceName[] = ['automation', 'streams', 'ratelimit'];

/** The services whose sections `self`'s port shows; undefined when this port serves no console. */
export function consoleSections(
  self: ServiceName,
  ctx: Pick<ServiceContext, 'directory'>,
): ServiceName[] | undefined {
  const served = ctx.directory?.served ?? [self];
  if (served.includes('automation'))
    return self === 'automation' ? ORDER.filter((s) => served.includes(s)) : undefined;
  return [self];
}

/** The CORS policy of `self`'s port: the console's origin when another port serves it. */
export function consoleCors(self: ServiceName, ctx: ServiceContext): CorsPolicy | undefined {
  const served = ctx.directory?.served ?? [self];
  if (self === 'automation' || !served.includes('automation')) return undefined;
  // Threads other than the automation one know its port only from the setting.
  return consoleOriginPolicy(() => ctx.directory?.port('automation') ?? ctx.core.automation.port);
}

export interface ConsoleOptions {
  self: ServiceName;
  ctx: ServiceContext;
  /** Where the built console is (default: dist/console of this installation). */
  assets?: ConsoleAssets;
}

const BASE_HEADERS: readonly [string, string][] = [
  ['x-content-type-options', 'nosniff'],
  ['referrer-policy', 'no-referrer'],
  ['x-frame-options', 'DENY'],
  ['cross-origin-opener-policy', 'same-origin'],
  ['cross-origin-resource-policy', 'same-origin'],
];

export function mountConsole(router: Router, options: ConsoleOptions): boolean {
  const { self, ctx } = options;
  const sections = consoleSections(self, ctx);
  if (!sections) return false;
  const assets = options.assets ?? new ConsoleAssets();

  /** Base URL of each section's API as the browser reaches it: this origin, or the same host at the service's port. */
  const bases = (req: HttpRequest): Record<string, string> => {
    const out: Record<string, string> = {};
    const host = hostName(req.headers['host']);
    for (const service of sections) {
      if (service === self) out[service] = '';
      else {
        const port = ctx.directory?.port(service);
        if (host !== undefined && port !== undefined) out[service] = `http://${host}:${port}`;
      }
    }
    return out;
  };

  const csp = (req: HttpRequest): string => {
    const others = Object.values(bases(req)).filter((b) => b !== '');
    const connect = ["'self'", ...others, ...others.map((b) => b.replace(/^http:/, 'ws:'))];
    return [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "img-src 'self' data: blob:",
      `connect-src ${connect.join(' ')}`,
      "frame-ancestors 'none'",
      "base-uri 'none'",
      "form-action 'self'",
    ].join('; ');
  };

  const secure = (req: HttpRequest, res: HttpResponse): HttpResponse => {
    for (const [k, v] of BASE_HEADERS) res.header(k, v);
    return res.header('content-security-policy', csp(req));
  };

  const serve = (req: HttpRequest, res: HttpResponse): void => {
    const name = req.params['*'] ?? '';
    secure(req, res);
    if (!assets.built) {
      res.error(
        404,
        'console_not_built',
        'the console is not built here: run `npm run build` (or npm start)',
      );
      return;
    }
    const asset = safeName(name) ? assets.get(name) : undefined;
    if (!asset) {
      res.error(404, 'not_found', `no console file ${JSON.stringify(name)}`);
      return;
    }
    res
      .header('content-type', asset.type)
      .header('etag', asset.etag)
      .header('cache-control', asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .header('vary', 'accept-encoding');
    if (matchesEtag(req.headers['if-none-match'], asset.etag)) {
      res.send(undefined, 304);
      return;
    }
    if (asset.gzip && /\bgzip\b/.test(req.headers['accept-encoding'] ?? '')) {
      res.header('content-encoding', 'gzip').send(asset.gzip);
      return;
    }
    res.send(asset.body);
  };

  router.get('/console', serve, { scope: false });
  router.get('/console/*', serve, { scope: false });
  router.get(
    '/console/config.json',
    (req, res) => {
      secure(req, res)
        .header('cache-control', 'no-store')
        .json({ services: sections, bases: bases(req), signIn: true });
    },
    { scope: false },
  );
  router.get(
    '/console/whoami',
    (req, res) => {
      secure(req, res).header('cache-control', 'no-store');
      const credentials = parseAuthorization(req.headers['authorization']);
      const principal = credentials.kind === 'key' ? ctx.auth.authenticate(credentials.key) : null;
      if (!principal) {
        res
          .header('www-authenticate', AUTH_CHALLENGE)
          .error(
            401,
            'unauthorized',
            credentials.kind === 'key' ? 'invalid or revoked API key' : 'missing API key',
          );
        return;
      }
      res.json({
        tenant: principal.tenant,
        user: principal.user || null,
        keyId: principal.keyId,
        name: principal.name || null,
        scopes: [...principal.scopes],
      });
    },
    { scope: false },
  );
  return true;
}

/** A relative file name of the console's own shape: no `..`, no backslash, no empty or dot segments. */
function safeName(name: string): boolean {
  if (name === '') return true;
  if (name.length > 200 || /[\\\0]/.test(name)) return false;
  return name.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..');
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((t) => t.trim() === etag || t.trim() === `W/${etag}` || t.trim() === '*');
}
