// One OpenAPI 3.1 document for /api/v1, built from the route table and the TypeBox schemas
// that validate the same requests. Named schemas ($id) go under components.schemas.

import type { TSchema } from '@sinclair/typebox';
import type { ApiRoute } from '../http/api.js';
import { paramSchema, routeParams } from '../http/ids.js';
import { ApiErrorEnvelope } from './schemas.js';

type Json = Record<string, unknown>;

/** TypeBox schemas are JSON Schema; named ones become $refs, and TypeBox's symbols are dropped. */
function toJsonSchema(schema: TSchema, components: Record<string, Json>, top = true): Json {
  const id = (schema as { $id?: string }).$id;
  if (id && !top) {
    if (!components[id]) components[id] = toJsonSchema(schema, components, true);
    return { $ref: `#/components/schemas/${id}` };
  }
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === '$id') continue;
    if (k === 'properties' && v && typeof v === 'object') {
      const props: Json = {};
      for (const [pk, pv] of Object.entries(v as Record<string, TSchema>))
        props[pk] = toJsonSchema(pv, components, false);
      out[k] = props;
    } else if ((k === 'items' || k === 'additionalProperties' || k === 'not') && v && typeof v === 'object') {
      out[k] = toJsonSchema(v as TSchema, components, false);
    } else if ((k === 'anyOf' || k === 'oneOf' || k === 'allOf') && Array.isArray(v)) {
      out[k] = v.map((s: TSchema) => toJsonSchema(s, components, false));
    } else if (k === 'patternProperties' && v && typeof v === 'object') {
      const props: Json = {};
      for (const [pk, pv] of Object.entries(v as Record<string, TSchema>))
        props[pk] = toJsonSchema(pv, components, false);
      out[k] = props;
    } else out[k] = v;
  }
  return out;
}

export function buildOpenApi(routes: readonly ApiRoute[], info: { version: string }): Json {
  const components: Record<string, Json> = {};
  const errorRef = toJsonSchema(ApiErrorEnvelope, components, false);
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const params: Json[] = [];
    for (const p of routeParams(route.path, route.params))
      params.push({ name: p.name, in: 'path', required: true, schema: paramSchema(p.kind) });
    if (route.query) {
      for (const [name, schema] of Object.entries(route.query.properties)) {
        const required = (route.query.required ?? []).includes(name);
        const p: Json = { name, in: 'query', required, schema: toJsonSchema(schema, components, false) };
        const description = (schema as { description?: string }).description;
        if (description) p['description'] = description;
        params.push(p);
      }
    }
    const responses: Json = {};
    for (const [status, spec] of Object.entries(route.responses)) {
      const contentType = spec.contentType ?? 'application/json';
      const content: Json = {};
      content[contentType] = spec.schema ? { schema: toJsonSchema(spec.schema, components, false) } : {};
      if (route.operationId === 'listRunArtifacts')
        content['application/zip'] = { schema: { type: 'string', format: 'binary' } };
      responses[status] = { description: spec.description, content };
    }
    const errors: Record<number, string> = {
      400: 'invalid request',
      401: 'missing or invalid API key',
      403: 'the key lacks the scope',
      404: 'not found',
      429: 'rate limited (Retry-After)',
    };
    if (route.body) errors[413] = 'body too large';
    for (const [status, description] of Object.entries(errors)) {
      responses[status] = { description, content: { 'application/json': { schema: errorRef } } };
    }
    responses['5XX'] = {
      description: 'server or dependency failure',
      content: { 'application/json': { schema: errorRef } },
    };
    const op: Json = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      parameters: params,
      responses,
    };
    if (route.public) op['security'] = [{ bearer: [] }, {}];
    if (route.body) {
      const content: Json = {};
      for (const type of route.body.contentTypes) {
        content[type] =
          route.body.schema && (type === 'application/json' || type === 'multipart/form-data')
            ? { schema: toJsonSchema(route.body.schema, components, false) }
            : { schema: { type: 'string', format: 'binary', description: route.body.description ?? '' } };
      }
      op['requestBody'] = { required: true, content };
    }
    const path = `/api/v1${route.path}`;
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: op };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Sluice automation platform API',
      version: info.version,
      description:
        'Runs, automations and files (API v1). Errors use ApiErrorEnvelope and carry x-request-id.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths,
    components: { schemas: components, securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
  };
}
