// The route contract: a route declares TypeBox schemas for its query and JSON body (and its
// responses); the core reads, folds and validates them once and hands the handler typed values.
// The OpenAPI document (openapi/document.ts) is generated from the same declarations, so what is
// validated and what is documented cannot drift apart.

import type { Static, TObject, TSchema } from '@sinclair/typebox';
import { checkContentType, HttpError, type HttpRequest, type HttpResponse } from '../../core/http/index.js';
import type { Principal } from '../../core/auth/types.js';
import type { ApiResponseSpec, ApiRoute } from './api.js';
import type { ParamKind } from './ids.js';
import { principalOf } from './principal.js';
import { parseQuery, validateBody } from './validate.js';

type Method = ApiRoute['method'];
/** The query type of a route that declares none. */
type NoQuery = TObject<Record<string, never>>;

/** What a handler receives: the request, its typed inputs and the caller. */
export interface RouteContext<Q, B> {
  readonly req: HttpRequest;
  readonly res: HttpResponse;
  /** Path parameters, already checked against their kinds (http/ids.ts). */
  readonly params: Readonly<Record<string, string>>;
  readonly query: Q;
  readonly body: B;
  /** Absent only on public routes called without a key. */
  readonly principal: Principal | undefined;
  /** The caller's tenant; throws 401 on a public route called without a key. */
  tenant(): string;
}

/** A JSON body, parsed and validated by the core before the handler runs. */
export interface JsonBodySpec<B extends TSchema> {
  schema: B;
  description?: string;
  /** Extra content types accepted as JSON (default: application/json only). */
  contentTypes?: string[];
  /**
   * Content types the handler reads itself (e.g. multipart/form-data beside JSON): the core leaves
   * such a body unread and hands `undefined`. Only with `bodyOptional` (the handler's body type
   * then includes undefined).
   */
  rawContentTypes?: string[];
  /** The body of a raw content type, for the document (e.g. multipart fields as the SDK sends them). */
  rawSchemas?: Readonly<Record<string, TSchema>>;
}

/** A body the handler reads itself (multipart, ZIP, raw bytes): declared for the document only. */
export interface RawBodySpec {
  raw: true;
  contentTypes: string[];
  description?: string;
  /** Schema of the multipart form fields, for the document. */
  schema?: TSchema;
}

interface RouteSpecBase<Q extends TObject> {
  method: Method;
  /** OpenAPI form, below /v1: `/runs/{id}`; a trailing `{path}` takes the rest of the path. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  public?: boolean;
  params?: Readonly<Record<string, ParamKind>>;
  query?: Q;
  responses: Record<number, ApiResponseSpec>;
  maxBodyBytes?: number;
}

type Handle<Q, B> = (ctx: RouteContext<Q, B>) => unknown;

/** A route without a JSON body, or one whose body the handler reads itself (`raw: true`). */
export interface RouteSpec<Q extends TObject> extends RouteSpecBase<Q> {
  body?: RawBodySpec;
  /**
   * Answers with `ctx.res`, or returns a value (or a promise of one) the core sends as JSON with
   * the route's first declared 2xx status.
   */
  handle: Handle<Static<Q>, undefined>;
}

/** A route with a JSON body the core parses and validates before the handler runs. */
export interface JsonRouteSpec<Q extends TObject, B extends TSchema> extends RouteSpecBase<Q> {
  body: JsonBodySpec<B>;
  handle: Handle<Static<Q>, Static<B>>;
}

/**
 * As JsonRouteSpec, but no body at all is allowed too, and so are the body's `rawContentTypes`:
 * the handler then sees `undefined` (and reads a raw body itself).
 */
export interface OptionalJsonRouteSpec<Q extends TObject, B extends TSchema> extends RouteSpecBase<Q> {
  body: JsonBodySpec<B>;
  bodyOptional: true;
  handle: Handle<Static<Q>, Static<B> | undefined>;
}

type AnySpec = RouteSpecBase<TObject> & {
  body?: JsonBodySpec<TSchema> | RawBodySpec;
  bodyOptional?: boolean;
  handle: (ctx: RouteContext<any, any>) => unknown;
};

function firstSuccess(responses: Record<number, ApiResponseSpec>): number {
  const codes = Object.keys(responses)
    .map(Number)
    .filter((c) => c >= 200 && c < 300)
    .sort((a, b) => a - b);
  return codes[0] ?? 200;
}

/** Builds the route table entry; the generic parameters carry the schemas' static types. */
export function route<B extends TSchema, Q extends TObject = NoQuery>(
  spec: OptionalJsonRouteSpec<Q, B>,
): ApiRoute;
export function route<B extends TSchema, Q extends TObject = NoQuery>(spec: JsonRouteSpec<Q, B>): ApiRoute;
export function route<Q extends TObject = NoQuery>(spec: RouteSpec<Q>): ApiRoute;
export function route(spec: AnySpec): ApiRoute {
  const jsonBody = spec.body && !('raw' in spec.body) ? spec.body : undefined;
  const jsonTypes = jsonBody ? ['application/json', ...(jsonBody.contentTypes ?? [])] : [];
  const rawTypes = jsonBody?.rawContentTypes ?? [];
  if (rawTypes.length > 0 && !spec.bodyOptional)
    throw new Error(`route ${spec.operationId}: rawContentTypes needs bodyOptional`);
  for (const type of Object.keys(jsonBody?.rawSchemas ?? {}))
    if (!rawTypes.includes(type))
      throw new Error(`route ${spec.operationId}: rawSchemas names ${type}, not one of its rawContentTypes`);
  const status = firstSuccess(spec.responses);
  const out: ApiRoute = {
    method: spec.method,
    path: spec.path,
    operationId: spec.operationId,
    summary: spec.summary,
    tag: spec.tag,
    responses: spec.responses,
    async handle(req, res) {
      const query = spec.query ? parseQuery(spec.query, req.query) : {};
      let body: unknown;
      if (jsonBody && rawTypes.includes(mediaType(req))) body = undefined;
      else if (jsonBody) {
        body = spec.bodyOptional ? await optionalJson(req, jsonTypes) : await req.json(jsonTypes);
        if (body !== undefined || !spec.bodyOptional) body = validateBody(jsonBody.schema, body);
      }
      const ctx = {
        req,
        res,
        params: req.params,
        query,
        body,
        principal: req.principal,
        tenant: () => principalOf(req).tenant,
      };
      const value = await spec.handle(ctx);
      if (!res.sent && value !== undefined) res.json(value, status);
    },
  };
  if (spec.public) out.public = true;
  if (spec.params) out.params = spec.params;
  if (spec.query) out.query = spec.query;
  if (spec.maxBodyBytes !== undefined) out.maxBodyBytes = spec.maxBodyBytes;
  if (jsonBody) {
    out.body = { schema: jsonBody.schema, contentTypes: [...jsonTypes, ...rawTypes] };
    if (jsonBody.description) out.body.description = jsonBody.description;
    if (jsonBody.rawSchemas) out.body.schemas = jsonBody.rawSchemas;
  } else if (spec.body) {
    const raw = spec.body as RawBodySpec;
    out.body = { contentTypes: raw.contentTypes };
    if (raw.schema) out.body.schema = raw.schema;
    if (raw.description) out.body.description = raw.description;
  }
  return out;
}

/**
 * The check the core makes of a JSON body, for a body a handler reads itself (multipart fields
 * decoded into the JSON body's shape): a 400 `invalid_body` listing the problems, else the value.
 */
export function validateFields<T extends TSchema>(schema: T, value: unknown): Static<T> {
  return validateBody<Static<T>>(schema, value);
}

const mediaType = (req: HttpRequest) =>
  (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();

/** An optional JSON body: no bytes → undefined; otherwise parsed as JSON like any other. */
async function optionalJson(req: HttpRequest, types: readonly string[]): Promise<unknown> {
  const bytes = await req.body();
  if (bytes.length === 0) return undefined;
  checkContentType(req.headers['content-type'], types);
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch (error) {
    throw new HttpError(400, 'invalid_json', `request body is not valid JSON: ${(error as Error).message}`);
  }
}
