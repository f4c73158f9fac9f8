// The one mapping between the service's routes and the product SDK's operations. An operation is
// identified by its method and its path below /v1: SDK path `/v1/runs/{id}` is our
// `/api/v1/runs/{id}` (or `/v1/runs/{id}`). Path parameter names may differ between the two, so
// parameters are compared by position; a trailing `{path}` parameter takes the rest of the path.

import { SDK_OPERATIONS, type SdkOperationName } from '../../src/automation/wire/operations.js';

export const SDK_OPERATION_NAMES = Object.keys(SDK_OPERATIONS) as SdkOperationName[];

/** `/api/v1/runs/{runId}` and `/v1/runs/{id}` both become `/runs/{}`. */
export function templateKey(method: string, path: string): string {
  const below = path.replace(/^\/api\/v1(?=\/)/, '').replace(/^\/v1(?=\/)/, '');
  return `${method.toUpperCase()} ${below.replace(/\{[^}]+\}/g, '{}')}`;
}

const BY_TEMPLATE = new Map<string, SdkOperationName>(
  SDK_OPERATION_NAMES.map((name) => [
    templateKey(SDK_OPERATIONS[name].method, SDK_OPERATIONS[name].path),
    name,
  ]),
);

/** The SDK operation a documented route (method + OpenAPI path) implements, if any. */
export function sdkOperationOfRoute(method: string, openApiPath: string): SdkOperationName | undefined {
  return BY_TEMPLATE.get(templateKey(method, openApiPath));
}

/** A matcher for concrete request paths of one path template (a trailing `{path}` spans slashes). */
export function pathMatcher(template: string): RegExp {
  const below = template.replace(/^\/api\/v1(?=\/)/, '').replace(/^\/v1(?=\/)/, '');
  const parts = below.split(/(\{[^}]+\})/).filter((p) => p.length > 0);
  const source = parts
    .map((part, i) =>
      part.startsWith('{')
        ? i === parts.length - 1 && (part === '{path}' || part === '{filename}')
          ? '(.+)'
          : '([^/]+)'
        : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('');
  return new RegExp(`^(?:/api)?/v1${source}$`);
}

const MATCHERS = SDK_OPERATION_NAMES.map((name) => ({
  name,
  method: SDK_OPERATIONS[name].method,
  // Literal segments first: `/experiments/export` must not be read as `/experiments/{experimentId}`.
  literalLength: SDK_OPERATIONS[name].path.replace(/\{[^}]+\}/g, '').length,
  re: pathMatcher(SDK_OPERATIONS[name].path),
})).sort((a, b) => b.literalLength - a.literalLength);

/** The SDK operation a concrete request (method + URL path) calls, if any. */
export function sdkOperationOfRequest(method: string, urlPath: string): SdkOperationName | undefined {
  return MATCHERS.find((m) => m.method === method.toUpperCase() && m.re.test(urlPath))?.name;
}
