// The Host header as the base of a consumer instance's base_uri. A client may send any bytes
// there; only a plain authority — a DNS name, IPv4 or bracketed IPv6 literal, and an optional
// port 0–65535 (RFC 9110 §7.2, RFC 3986 §3.2.2) — is trusted. Anything else (a path, query,
// fragment, userinfo `@`, backslash, non-ASCII) could point the client's later calls elsewhere,
// so the listener's own URL is used instead. STREAMS_PUBLIC_URL, when set, wins over both.

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const NAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*\\.?$`);
const IPV6 = /^\[[0-9A-Fa-f:.]{2,45}\]$/;

/** True when `value` is `host` or `host:port` with nothing else in it. */
export function isPlainHost(value: string): boolean {
  if (value.length === 0 || value.length > 261) return false;
  let host = value;
  const colon = value.lastIndexOf(':');
  if (colon !== -1 && colon > value.lastIndexOf(']')) {
    const port = value.slice(colon + 1);
    if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) return false;
    host = value.slice(0, colon);
  }
  return host.length <= 255 && (NAME.test(host) || IPV6.test(host));
}

/** `http://<Host>` when the Host header is a plain host[:port]; otherwise `fallback()`. */
export function baseFromHost(host: string | undefined, fallback: () => string): string {
  return host !== undefined && isPlainHost(host) ? `http://${host}` : fallback();
}
