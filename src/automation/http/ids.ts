// Identifiers in paths, bodies and queries. Every identifier is bounded and made of a small
// ASCII alphabet before it reaches a handler: LMDB refuses keys over ~2 KB (a 500 otherwise),
// and an id never becomes a path segment that could climb out of its folder. A value that breaks
// these rules is a 400; a well-formed id that names nothing stays the handler's 404.
// Path parameters are checked once for every route (see checkRouteParams, called by the router
// glue in ../index.ts); body and query fields use the schemas below (IdString, IdListString …),
// so http/validate.ts reports them as 400s with their field path.

import { Type, type TString } from '@sinclair/typebox';
import { checkRelativePath } from '../datasets/paths.js';
import { invalid } from '../errors.js';

export const MAX_ID_CHARS = 256;
/** Git refs (versions, branches) after `@` in a target, and source_ref filters. */
export const MAX_REF_CHARS = 256;
/** Query list items that are not ids (statuses, user ids …) but still end up in index keys. */
export const MAX_TOKEN_CHARS = 256;
/** An opaque list cursor is base64url of a small JSON array. */
export const MAX_CURSOR_CHARS = 1024;

/** Letters, digits and `_ . @ -`; starts with a letter, digit or `_`; no `..`. */
export const ID_PATTERN = `^(?!.*\\.\\.)[A-Za-z0-9_][A-Za-z0-9_.@-]{0,${MAX_ID_CHARS - 1}}$`;
const ID = new RegExp(ID_PATTERN);
/** A git ref as `@<ref>` of a target: may hold `/` (feature/x) but never `..`. */
const REF_BODY = `(?!.*\\.\\.)[A-Za-z0-9][A-Za-z0-9_./-]{0,${MAX_REF_CHARS - 1}}`;
export const REF_PATTERN = `^${REF_BODY}$`;
/** `<id or alias>` or `<id or alias>@<ref>`. */
export const TARGET_PATTERN = `^(?!.*\\.\\.)[A-Za-z0-9_][A-Za-z0-9_.-]{0,${MAX_ID_CHARS - 1}}(?:@${REF_BODY})?$`;

export function idProblem(value: string): string | undefined {
  if (value.length === 0) return 'must not be empty';
  if (value.length > MAX_ID_CHARS) return `must have at most ${MAX_ID_CHARS} characters`;
  if (value.includes('..')) return 'must not contain ..';
  if (!ID.test(value))
    return 'may hold only ASCII letters, digits, _ . @ - (and start with a letter, digit or _)';
  return undefined;
}

const shown = (value: string) => JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);

export function checkId(value: string, field: string): string {
  const problem = idProblem(value);
  if (problem) throw invalid(field, `${field} ${shown(value)} is not a valid identifier: ${problem}`);
  return value;
}

/** The body/query schema of an identifier field: the same rule as idProblem. */
export const IdString = (description?: string): TString =>
  Type.String({
    minLength: 1,
    maxLength: MAX_ID_CHARS,
    pattern: ID_PATTERN,
    ...(description ? { description } : {}),
  });

const ITEM = `[A-Za-z0-9_][A-Za-z0-9_.@-]{0,${MAX_ID_CHARS - 1}}`;
/** A comma list of ids (spaces around items and empty items are ignored by the handlers). */
export const ID_LIST_PATTERN = `^(?!.*\\.\\.) *(?:${ITEM} *)?(?:, *(?:${ITEM} *)?)*$`;

/** The schema of a query field holding a comma list of ids (`ids`, `batch_id` …). */
export const IdListString = (description?: string): TString =>
  Type.String({ pattern: ID_LIST_PATTERN, ...(description ? { description } : {}) });

/** A comma list of short free-form items (statuses, user ids): each at most MAX_TOKEN_CHARS, no NUL. */
export const TOKEN_LIST_PATTERN = `^[^,\\u0000]{0,${MAX_TOKEN_CHARS}}(?:,[^,\\u0000]{0,${MAX_TOKEN_CHARS}})*$`;

export const TokenListString = (description?: string): TString =>
  Type.String({ pattern: TOKEN_LIST_PATTERN, ...(description ? { description } : {}) });

/** The schema of a version or git ref field (`version`, `sourceRef`). */
export const RefString = (description?: string): TString =>
  Type.String({
    minLength: 1,
    maxLength: MAX_REF_CHARS,
    pattern: REF_PATTERN,
    ...(description ? { description } : {}),
  });

/** The schema of a run target: `<automation id or alias>[@<version or ref>]`. */
export const TargetString = (description?: string): TString =>
  Type.String({
    minLength: 1,
    maxLength: MAX_ID_CHARS + 1 + MAX_REF_CHARS,
    pattern: TARGET_PATTERN,
    ...(description ? { description } : {}),
  });

// ---------------------------------------------------------------------------------------------
// Path parameters

/** `id`: one identifier; `path`: a slash-delimited relative file path (see datasets/paths.ts). */
export type ParamKind = 'id' | 'path';

/**
 * The kind of each path parameter name used by the route table. A route with a parameter that
 * is not listed here (and not declared in the route's own `params`) fails at startup, so a new
 * route cannot skip the check.
 */
export const PARAM_KINDS: Readonly<Record<string, ParamKind>> = {
  id: 'id',
  exampleId: 'id',
  experimentId: 'id',
  path: 'path',
  filename: 'path',
};

export interface RouteParam {
  /** The name in the OpenAPI path (`{exampleId}`). */
  name: string;
  /** The name the router binds (`*` for a trailing `{path}`). */
  key: string;
  kind: ParamKind;
}

export function routeParams(path: string, declared: Readonly<Record<string, ParamKind>> = {}): RouteParam[] {
  const out: RouteParam[] = [];
  for (const m of path.matchAll(/\{(\w+)\}/g)) {
    const name = m[1]!;
    const kind = declared[name] ?? PARAM_KINDS[name];
    if (!kind) throw new Error(`route ${path}: path parameter {${name}} has no kind (see PARAM_KINDS)`);
    const tail = name === 'path' && m.index + m[0].length === path.length;
    out.push({ name, key: tail ? '*' : name, kind });
  }
  return out;
}

/** Throws a 400 naming the parameter when a path parameter is malformed. */
export function checkRouteParams(params: readonly RouteParam[], values: Record<string, string>): void {
  for (const p of params) {
    const value = values[p.key] ?? '';
    if (p.kind === 'id') checkId(value, p.name);
    else {
      const problem = checkRelativePath(value);
      if (problem) throw invalid(p.name, `${p.name} ${shown(value)}: ${problem}`);
    }
  }
}

/** The OpenAPI schema of a path parameter of this kind. */
export function paramSchema(kind: ParamKind): Record<string, unknown> {
  return kind === 'id'
    ? { type: 'string', minLength: 1, maxLength: MAX_ID_CHARS, pattern: ID_PATTERN }
    : { type: 'string', minLength: 1, maxLength: 1024, description: 'slash-delimited relative path' };
}
