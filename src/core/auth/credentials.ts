// Reading an API key out of an Authorization header. Two schemes carry the same key:
//   Bearer <key>          — the documented form (the spec's `Bearer: <key>` with a colon too);
//   Basic base64(user:pw) — for HTTP clients that only speak Basic (many Kafka REST clients):
//                           the password is the key; the user name is ignored. With an empty
//                           password the user name is taken as the key (`curl -u <key>:`).
// Parsing is separate from verifying so the server can answer a malformed header with its own
// 401 message, and so every rule here is testable without a listener.

export type Credentials =
  | { readonly kind: 'key'; readonly scheme: 'bearer' | 'basic'; readonly key: string }
  /** No Authorization header, or a scheme we do not take. */
  | { readonly kind: 'missing' }
  /** A Basic header that cannot be decoded into `user:password` with a key in it. */
  | { readonly kind: 'malformed'; readonly reason: string };

/** The challenges sent with a 401 (RFC 9110 §11.6.1): both schemes are offered. */
export const AUTH_CHALLENGE = 'Bearer, Basic realm="sluice", charset="UTF-8"';
export const BASIC_CHALLENGE = 'Basic realm="sluice", charset="UTF-8"';

const BEARER = /^Bearer\s*:?\s+(\S+)\s*$/i;
const BASIC = /^Basic(?:\s+(.*))?$/is;
// RFC 7617 token68 in practice: standard base64 with optional padding.
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
// An API key never holds control characters or spaces; refusing them keeps log lines and
// comparisons free of surprises from hand-built headers.
const KEY = /^[\x21-\x7e]{1,512}$/;

export function parseAuthorization(header: string | undefined): Credentials {
  if (header === undefined) return { kind: 'missing' };
  const bearer = BEARER.exec(header);
  if (bearer) return { kind: 'key', scheme: 'bearer', key: bearer[1]! };
  const basic = BASIC.exec(header.trim());
  if (!basic) return { kind: 'missing' };
  const encoded = (basic[1] ?? '').trim();
  if (encoded === '') return { kind: 'malformed', reason: 'Basic credentials are empty' };
  if (encoded.length > 2048 || encoded.length % 4 === 1 || !BASE64.test(encoded)) {
    return { kind: 'malformed', reason: 'Basic credentials are not base64' };
  }
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) {
    return { kind: 'malformed', reason: 'Basic credentials must be base64("user:password")' };
  }
  const user = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  const key = password !== '' ? password : user;
  if (!KEY.test(key)) {
    return {
      kind: 'malformed',
      reason: 'Basic credentials carry no API key: put the key in the password (the user name is ignored)',
    };
  }
  return { kind: 'key', scheme: 'basic', key };
}

/** The WebSocket subprotocol a browser offers beside `sluice.bearer.<key>`; the server picks it. */
export const WS_PROTOCOL = 'sluice';
const WS_BEARER = 'sluice.bearer.';

/**
 * Browsers cannot set an Authorization header on a WebSocket, so the console offers the key as a
 * subprotocol (`Sec-WebSocket-Protocol: sluice, sluice.bearer.<key>`), the way Kubernetes takes
 * a bearer token from browsers: a header, never the URL. The answer names `sluice`, never the
 * key. Undefined when no such protocol was offered.
 */
export function bearerFromSubprotocols(
  header: string | undefined,
): { key: string; reply: string } | undefined {
  if (header === undefined) return undefined;
  const offered = header.split(',').map((p) => p.trim());
  const bearer = offered.find((p) => p.startsWith(WS_BEARER));
  if (bearer === undefined) return undefined;
  const key = bearer.slice(WS_BEARER.length);
  return { key, reply: offered.includes(WS_PROTOCOL) ? WS_PROTOCOL : '' };
}
