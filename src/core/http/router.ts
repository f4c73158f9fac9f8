// A segment trie router. Static segments win over `:param` segments, which win over a trailing
// `*`; so `/topics/topic` and `/topics/:name` can live side by side. The router knows every
// method registered for a path, which is what 405 needs for its Allow header.

import type { Handler, RouteOptions, WebSocketHandlers } from './types.js';

export interface Route {
  readonly method: string;
  readonly pattern: string;
  readonly handler: Handler;
  readonly options: RouteOptions;
  readonly paramNames: readonly string[];
}

export interface WebSocketRoute {
  readonly pattern: string;
  readonly handlers: WebSocketHandlers;
  readonly options: RouteOptions & {
    maxPayloadBytes?: number;
    maxBackpressureBytes?: number;
    idleTimeoutS?: number;
  };
}

interface Node {
  statics: Map<string, Node>;
  param: Node | undefined;
  tail: Map<string, Route> | undefined; // routes ending in `*`, by method
  routes: Map<string, Route>; // by method
}

function newNode(): Node {
  return { statics: new Map(), param: undefined, tail: undefined, routes: new Map() };
}

export type Match =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allow: string[] }
  | { kind: 'not-found' };

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

export class Router {
  private readonly root = newNode();
  private readonly wsRoutes: WebSocketRoute[] = [];
  /**
   * Nodes of patterns without `:param` or `*`, by pattern: a request path equal to one of them
   * ends at that node in the trie walk too (static segments are tried first at every level), so
   * the hot fixed paths skip splitting and walking.
   */
  private readonly staticNodes = new Map<string, Node>();

  route(method: string, pattern: string, handler: Handler, options: RouteOptions = {}): this {
    if (!pattern.startsWith('/')) throw new Error(`route pattern must start with '/': ${pattern}`);
    const segments = splitPath(pattern);
    const paramNames: string[] = [];
    let node = this.root;
    for (let i = 0; i < segments.length; i++) {
      const seg = segments[i]!;
      if (seg === '*') {
        if (i !== segments.length - 1) throw new Error(`'*' must be the last segment: ${pattern}`);
        paramNames.push('*');
        node.tail ??= new Map();
        addRoute(node.tail, { method: method.toUpperCase(), pattern, handler, options, paramNames });
        return this;
      }
      if (seg.startsWith(':')) {
        paramNames.push(seg.slice(1));
        node.param ??= newNode();
        node = node.param;
      } else {
        let next = node.statics.get(seg);
        if (!next) {
          next = newNode();
          node.statics.set(seg, next);
        }
        node = next;
      }
    }
    addRoute(node.routes, { method: method.toUpperCase(), pattern, handler, options, paramNames });
    if (paramNames.length === 0) this.staticNodes.set(pattern, node);
    return this;
  }

  get(pattern: string, handler: Handler, options?: RouteOptions): this {
    return this.route('GET', pattern, handler, options);
  }
  post(pattern: string, handler: Handler, options?: RouteOptions): this {
    return this.route('POST', pattern, handler, options);
  }
  put(pattern: string, handler: Handler, options?: RouteOptions): this {
    return this.route('PUT', pattern, handler, options);
  }
  patch(pattern: string, handler: Handler, options?: RouteOptions): this {
    return this.route('PATCH', pattern, handler, options);
  }
  delete(pattern: string, handler: Handler, options?: RouteOptions): this {
    return this.route('DELETE', pattern, handler, options);
  }

  /** A WebSocket endpoint; uWS patterns (`:param`, `*`) are used as they are. */
  ws(pattern: string, handlers: WebSocketHandlers, options: WebSocketRoute['options'] = {}): this {
    this.wsRoutes.push({ pattern, handlers, options });
    return this;
  }

  webSocketRoutes(): readonly WebSocketRoute[] {
    return this.wsRoutes;
  }

  /** Every registered HTTP route (static segments sorted), for tools that walk a service's API. */
  routes(): Route[] {
    const out: Route[] = [];
    const visit = (node: Node): void => {
      out.push(...node.routes.values());
      for (const key of [...node.statics.keys()].sort()) visit(node.statics.get(key)!);
      if (node.param) visit(node.param);
      if (node.tail) out.push(...node.tail.values());
    };
    visit(this.root);
    return out;
  }

  match(method: string, path: string): Match {
    const fixed = this.staticNodes.get(path);
    if (fixed !== undefined) {
      const route = fixed.routes.get(method) ?? (method === 'HEAD' ? fixed.routes.get('GET') : undefined);
      if (route) return { kind: 'found', route, params: NO_PARAMS };
      return { kind: 'method-not-allowed', allow: allowOf(fixed.routes) };
    }
    const segments = splitPath(path);
    const values: string[] = [];
    const node = this.walk(this.root, segments, 0, values);
    if (node) {
      const route = node.routes.get(method) ?? (method === 'HEAD' ? node.routes.get('GET') : undefined);
      if (route) return { kind: 'found', route, params: bindParams(route.paramNames, values) };
      return { kind: 'method-not-allowed', allow: allowOf(node.routes) };
    }
    return { kind: 'not-found' };
  }

  /** Depth-first: static, then param, then tail. Returns a node with routes for the full path. */
  private walk(node: Node, segments: string[], index: number, values: string[]): Node | undefined {
    if (index === segments.length) {
      if (node.routes.size > 0) return node;
      if (node.tail) return tailNode(node.tail, values, '');
      return undefined;
    }
    const seg = segments[index]!;
    const stat = node.statics.get(seg);
    if (stat) {
      const found = this.walk(stat, segments, index + 1, values);
      if (found) return found;
    }
    if (node.param && seg !== '') {
      values.push(seg);
      const found = this.walk(node.param, segments, index + 1, values);
      if (found) return found;
      values.pop();
    }
    if (node.tail) return tailNode(node.tail, values, segments.slice(index).join('/'));
    return undefined;
  }
}

function tailNode(tail: Map<string, Route>, values: string[], rest: string): Node {
  values.push(rest);
  return { statics: new Map(), param: undefined, tail: undefined, routes: tail };
}

function addRoute(map: Map<string, Route>, route: Route): void {
  if (map.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.pattern}`);
  map.set(route.method, route);
}

function allowOf(routes: Map<string, Route>): string[] {
  const allow = new Set(routes.keys());
  if (allow.has('GET')) allow.add('HEAD');
  return [...allow].sort();
}

function splitPath(path: string): string[] {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return trimmed.split('/').slice(1);
}

function bindParams(names: readonly string[], values: readonly string[]): Record<string, string> {
  const params: Record<string, string> = {};
  for (let i = 0; i < names.length; i++) {
    const raw = values[i] ?? '';
    params[names[i]!] = safeDecode(raw);
  }
  return params;
}

/**
 * Binds a WebSocket route's uWS-style pattern (`:name` segments, a trailing `*`) against a
 * path; undefined when the path does not match. uWS matches WebSocket routes itself; node:http
 * matches them here, and both bind the parameters here.
 */
export function bindWebSocketPattern(pattern: string, path: string): Record<string, string> | undefined {
  const names = pattern.split('/');
  const values = path.split('/');
  const params: Record<string, string> = {};
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    if (name === '*' && i === names.length - 1) return params;
    const value = values[i];
    if (value === undefined) return undefined;
    if (name.startsWith(':')) params[name.slice(1)] = safeDecode(value);
    else if (name !== value) return undefined;
  }
  return values.length === names.length ? params : undefined;
}

export function safeDecode(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment; // a malformed escape stays as sent; the handler validates the value
  }
}
