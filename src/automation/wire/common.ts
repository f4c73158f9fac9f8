// Building blocks for the public wire format, plus the error envelope and auth check shapes.
// Every schema in this folder mirrors one type of the product SDK's generated types
// (src/generated/types.gen.ts) and carries that type's name as its $id, so the OpenAPI document
// lists it under components.schemas by the same name.

import {
  Type,
  type Static,
  type TLiteral,
  type TProperties,
  type TSchema,
  type TUnion,
  type ObjectOptions,
} from '@sinclair/typebox';

/**
 * A response object: unknown fields fail validation, so a handler that leaks an internal field
 * is caught by the shape test rather than by a client.
 */
export const Closed = <T extends TProperties>(properties: T, options: ObjectOptions = {}) =>
  Type.Object(properties, { ...options, additionalProperties: false });

/** A request body object: extra fields are tolerated (requests are validated leniently). */
export const Body = <T extends TProperties>(properties: T, options: ObjectOptions = {}) =>
  Type.Object(properties, options);

export const Nullable = <T extends TSchema>(
  schema: T,
  options: { description?: string; $id?: string } = {},
) => Type.Union([schema, Type.Null()], options);

/** `{ [key: string]: unknown }` in the SDK types. */
export const OpenRecord = (description?: string) =>
  Type.Record(Type.String(), Type.Unknown(), description ? { description } : {});

type Literals<T extends readonly string[]> = { -readonly [K in keyof T]: TLiteral<T[K]> };

/** A union of string literals, e.g. `'workflow' | 'agent'`. */
export const OneOf = <const T extends readonly string[]>(
  values: T,
  options: { description?: string; $id?: string } = {},
) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  ) as unknown as TUnion<Extract<Literals<T>, TSchema[]>>;

export const Str = (description?: string) => Type.String(description ? { description } : {});
export const Num = (description?: string) => Type.Number(description ? { description } : {});
export const Bool = (description?: string) => Type.Boolean(description ? { description } : {});

/** A file part of a multipart body (`Blob | File` in the SDK types). */
export const FilePart = (description?: string) =>
  Type.String({ format: 'binary', ...(description ? { description } : {}) });

/** Offset paging envelope shared by the automation, example and version lists. */
export const Page = <T extends TSchema>(item: T, $id: string) =>
  Closed({ data: Type.Array(item), total: Num(), limit: Num(), offset: Num() }, { $id });

export const ApiErrorIssue = Closed(
  {
    field: Str('JSON path of the offending field, or "<root>"'),
    message: Str('Human-readable error message'),
    code: Str('Machine-readable error code (e.g. invalid_value, not_found)'),
    severity: OneOf(['error', 'warning'] as const, { description: 'Issue severity' }),
  },
  { $id: 'ApiErrorIssue' },
);
export type ApiErrorIssue = Static<typeof ApiErrorIssue>;

export const ApiErrorEnvelope = Closed(
  {
    issues: Type.Array(ApiErrorIssue),
    requestId: Str('Request id echoed via the x-request-id header'),
    hint: Type.Optional(Str('Suggested fix for known error patterns')),
    docsUrl: Type.Optional(Str('Link to relevant docs')),
  },
  { $id: 'ApiErrorEnvelope' },
);
export type ApiErrorEnvelope = Static<typeof ApiErrorEnvelope>;

export const AuthCheckResponse = Closed(
  {
    ok: Type.Literal(true),
    tenantId: Str(),
    tenantSlug: Str(),
    tenantName: Nullable(Str()),
    userId: Nullable(Str()),
    keyId: Str(),
    email: Nullable(Str()),
    name: Nullable(Str()),
    scope: Type.Array(Str()),
    wildcardGranted: Bool(),
  },
  { $id: 'AuthCheckResponse' },
);
export type AuthCheckResponse = Static<typeof AuthCheckResponse>;

export const AutomationType = OneOf(['workflow', 'agent'] as const, { $id: 'AutomationType' });
export type AutomationType = Static<typeof AutomationType>;

/** A file named by the run (input files, agent outputs, corrected files). */
export const RunFile = Closed({ name: Str() }, { $id: 'RunFile' });
export type RunFile = Static<typeof RunFile>;

export const COMMON_SCHEMAS: readonly TSchema[] = [
  ApiErrorIssue,
  ApiErrorEnvelope,
  AuthCheckResponse,
  AutomationType,
  RunFile,
];
