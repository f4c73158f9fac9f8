// One OpenAPI 3.1 document for /api/v1, built from the route table and the TypeBox schemas
// that validate the same requests. Named schemas ($id) go under components.schemas.

import type { TSchema } from '@sinclair/typebox';
import type { ApiRoute } from '../http/api.js';
import { paramSchema, routeParams } from '../http/ids.js';
import { ApiErrorEnvelope } from '../wire/common.js';

type Json = Record<string, unknown>;

const JSON_TYPE = 'application/json';

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
      const schemas = spec.content ?? (spec.schema ? { [spec.contentType ?? JSON_TYPE]: spec.schema } : {});
      const content: Json = {};
      for (const [type, schema] of Object.entries(schemas))
        content[type] = { schema: toJsonSchema(schema, components, false) };
      if (!spec.content && !spec.schema) content[spec.contentType ?? JSON_TYPE] = {};
      // A 204 carries no content entry at all.
      responses[status] =
        Number(status) === 204 && Object.keys(schemas).length === 0
          ? { description: spec.description }
          : { description: spec.description, content };
    }
    // The error statuses every operation of the SDK declares, each with the error envelope.
    const errors: Record<number, string> = {
      400: 'invalid request',
      401: 'missing or invalid API key',
      403: 'the key lacks the scope',
      404: 'not found',
      413: 'body too large',
      429: 'rate limited (Retry-After)',
    };
    for (const [status, description] of Object.entries(errors)) {
      responses[status] = { description, content: { [JSON_TYPE]: { schema: errorRef } } };
    }
    responses['5XX'] = {
      description: 'server or dependency failure',
      content: { [JSON_TYPE]: { schema: errorRef } },
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
        const schema =
          route.body.schemas?.[type] ??
          (type === JSON_TYPE || type === 'multipart/form-data' ? route.body.schema : undefined);
        content[type] = schema
          ? { schema: toJsonSchema(schema, components, false) }
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
