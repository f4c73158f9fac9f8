// Cross-origin reads for the web console under `sluice serve`: the console is a page of the
// automation port and calls the streams and rate limit APIs on their own ports. A server built
// with a CorsPolicy lets exactly the origins the policy allows read its answers; the key still
// travels in the Authorization header (never a cookie), so no credentials mode is granted.
// Fetch standard, CORS protocol: https://fetch.spec.whatwg.org/#http-cors-protocol

export interface CorsPolicy {
  /** True when a page of `origin` may call this server, reached by the browser at `host`. */
  allows(origin: string, host: string | undefined): boolean;
}

const METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE';
const HEADERS = 'authorization, content-type, accept, x-request-id, traceparent';
// How long a browser may keep a preflight answer (seconds); Chromium caps it at 7200.
const MAX_AGE = '600';

export interface CorsAnswer {
  /** Headers to add to the response (empty when the origin is not allowed or absent). */
  headers: [string, string][];
  /** A preflight (OPTIONS with Access-Control-Request-Method): answer it without routing. */
  preflight: boolean;
  allowed: boolean;
}

export function corsFor(
  policy: CorsPolicy,
  method: string,
  headers: Readonly<Record<string, string>>,
): CorsAnswer | undefined {
  const origin = headers['origin'];
  if (origin === undefined) return undefined;
  const preflight = method === 'OPTIONS' && headers['access-control-request-method'] !== undefined;
  if (!policy.allows(origin, headers['host']))
    return { headers: [['vary', 'origin']], preflight, allowed: false };
  const out: [string, string][] = [
    ['access-control-allow-origin', origin],
    ['vary', 'origin'],
  ];
  if (preflight) {
    out.push(
      ['access-control-allow-methods', METHODS],
      ['access-control-allow-headers', HEADERS],
      ['access-control-max-age', MAX_AGE],
    );
  } else {
    out.push(['access-control-expose-headers', 'x-request-id, retry-after']);
  }
  return { headers: out, preflight, allowed: true };
}

/** The host name of a Host header (`example.org:8082` → `example.org`, `[::1]:80` → `[::1]`). */
export function hostName(host: string | undefined): string | undefined {
  if (host === undefined) return undefined;
  const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::\d{1,5})?$/.exec(host.trim());
  return match?.[1]?.toLowerCase();
}

/**
 * The console's origin as the browser sees it: same host name as this request's Host, the
 * console's port, plain http (the services speak no TLS themselves).
 */
export function consoleOriginPolicy(consolePort: () => number | undefined): CorsPolicy {
  return {
    allows(origin, host) {
      const name = hostName(host);
      const port = consolePort();
      if (name === undefined || port === undefined || port === 0) return false;
      return origin.toLowerCase() === `http://${name}:${port}`;
    },
  };
}
