// Every operation of the product SDK, called once through our own client against the real
// service, and every answer checked against the JSON Schema the service's own OpenAPI document
// gives for that operation and status. The document itself is checked too: each operation has a
// typed response schema, its operationId is the SDK's operation name, and the schemas equal the
// SDK's (SDK_OPERATIONS), so a route that drifts from the SDK's types fails here even before a
// caller notices.
//
// The test collects every problem and asserts once at the end, with a list of
// `operation | status | JSON pointer | problem` lines, so one run shows all that is left to fix.

import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ajv, type ValidateFunction } from 'ajv';
import type { TSchema } from '@sinclair/typebox';
import { ServiceClient, toFile } from '../../src/automation/client/index.js';
import type { Run, RunStartResponse } from '../../src/automation/client/index.js';
import { ApiErrorEnvelope } from '../../src/automation/wire/common.js';
import { toPlainJsonSchema } from '../../src/automation/wire/json-schema.js';
import { SDK_OPERATIONS, type SdkOperationName } from '../../src/automation/wire/operations.js';
import { startHarness, type Harness } from './harness.js';
import { gitIn, release, workflowManifest } from './registry-git.js';
import {
  pathMatcher,
  SDK_OPERATION_NAMES,
  sdkOperationOfRequest,
  sdkOperationOfRoute,
} from './sdk-operations.js';
import { waitUntil } from '../helpers/wait.js';

type Json = Record<string, unknown>;

interface Problem {
  op: string;
  status: string;
  pointer: string;
  problem: string;
}

interface Exchange {
  method: string;
  url: URL;
  status: number;
  contentType: string;
  body: Promise<Uint8Array>;
}

const A = 'workflows.text-report';
const problems: Problem[] = [];
const notes = new Map<SdkOperationName, string>();
const exchanges: Exchange[] = [];

function problem(op: string, status: string | number, pointer: string, text: string): void {
  problems.push({ op, status: String(status), pointer, problem: text });
}

function short(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 90 ? `${text.slice(0, 87)}...` : text;
}

// ---- schemas: the document's (with $refs resolved) and the SDK's, in one comparable form ----

// Descriptions are prose, not shape; `$id`s are names, not shape.
function withoutIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutIds);
  if (value === null || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === '$id' || (k === 'description' && typeof v === 'string')) continue;
    out[k] = withoutIds(v);
  }
  return out;
}

// A route may validate a request more tightly than the SDK's type says (length, pattern and
// range bounds, integers where the SDK says number, closed objects): the SDK never sends what
// those refuse. Names, types, required fields and enumerations must still match.
const REQUEST_BOUNDS = new Set([
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minItems',
  'maxItems',
  'uniqueItems',
]);

/** `'a' | 'b'` narrowing a string: a tighter validation of the same type. */
function isStringEnum(value: unknown): boolean {
  const anyOf = (value as Json | null)?.['anyOf'];
  return (
    Array.isArray(anyOf) &&
    anyOf.every((v) => (v as Json)['type'] === 'string' && typeof (v as Json)['const'] === 'string')
  );
}

function requestShape(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(requestShape);
  if (value === null || typeof value !== 'object') return value;
  if (isStringEnum(value)) return { type: 'string' };
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) {
    if (REQUEST_BOUNDS.has(k) && typeof v !== 'object') continue;
    if (k === 'additionalProperties' && v === false) continue;
    out[k] = k === 'type' && v === 'integer' ? 'number' : requestShape(v);
  }
  return out;
}

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A request the service accepts beyond the SDK's type breaks no SDK caller: a property the SDK's
 * type does not have (optional in the document), or a property the SDK requires that the
 * document leaves optional. Such widenings are listed as extensions and taken out of the
 * comparison; everything else (types, enumerations, a property the document requires beyond the
 * SDK) must match.
 */
function withoutWidenings(doc: unknown, sdk: unknown, where: string, pointer = ''): unknown {
  if (Array.isArray(doc) && Array.isArray(sdk))
    return doc.map((d, i) => withoutWidenings(d, sdk[i], where, `${pointer}/${i}`));
  if (!isObject(doc) || !isObject(sdk)) return doc;
  const required = Array.isArray(doc['required']) ? (doc['required'] as string[]) : [];
  const sdkProps = isObject(sdk['properties']) ? sdk['properties'] : undefined;
  const out: Json = {};
  for (const [k, v] of Object.entries(doc)) {
    if (k === 'properties' && isObject(v) && sdkProps) {
      const props: Json = {};
      for (const [name, schema] of Object.entries(v)) {
        if (!(name in sdkProps) && !required.includes(name)) {
          extensions.push(`${where}: optional ${pointer}/properties/${name}, not in the SDK's type`);
          continue;
        }
        props[name] = withoutWidenings(schema, sdkProps[name], where, `${pointer}/properties/${name}`);
      }
      out[k] = props;
    } else out[k] = withoutWidenings(v, sdk[k], where, `${pointer}/${k}`);
  }
  const relaxed = Array.isArray(sdk['required'])
    ? (sdk['required'] as string[]).filter((n) => !required.includes(n))
    : [];
  if (relaxed.length > 0) {
    extensions.push(`${where}: ${pointer || '/'} leaves ${relaxed.join(', ')} optional (the SDK requires)`);
    out['required'] = [...required, ...relaxed];
  }
  return out;
}

/**
 * A query value is text on the wire. Where the SDK types a parameter as a plain string and the
 * service reads that text as a boolean (true/false/1/0, http/validate.ts), a number, or a
 * comma-separated list, the declaration is a narrowing of the same text, not another type. It is
 * accepted when the SDK's spelling of the parameter was sent and answered 2xx in this run (the
 * calls below send the values the SDK documents: 'true'/'false', '0.5', 'input,usage,...').
 * Returns what the service reads the text as, or undefined when the rule does not apply.
 */
function textNarrowing(doc: unknown, sdk: unknown): string | undefined {
  if (JSON.stringify(sdk) !== JSON.stringify({ type: 'string' }) || !isObject(doc)) return undefined;
  const type = doc['type'];
  if (type === 'boolean') return 'a boolean';
  if (type === 'number') return 'a number';
  if (type === 'array' && JSON.stringify(doc['items']) === JSON.stringify({ type: 'string' }))
    return 'a comma-separated list';
  return undefined;
}

/** Whether some recorded call of `op` sent query parameter `name` and was answered 2xx. */
function sentAndAccepted(op: SdkOperationName, name: string): boolean {
  return exchanges.some(
    (e) =>
      e.status >= 200 &&
      e.status < 300 &&
      e.url.searchParams.has(name) &&
      sdkOperationOfRequest(e.method, e.url.pathname) === op,
  );
}

function deref(schema: unknown, components: Record<string, unknown>, seen: string[] = []): unknown {
  if (Array.isArray(schema)) return schema.map((s) => deref(s, components, seen));
  if (schema === null || typeof schema !== 'object') return schema;
  const ref = (schema as Json)['$ref'];
  if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
    const name = ref.slice('#/components/schemas/'.length);
    if (seen.includes(name)) return { $recursive: name };
    return deref(components[name], components, [...seen, name]);
  }
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) out[k] = deref(v, components, seen);
  return out;
}

function sdkSchema(schema: TSchema): unknown {
  return withoutIds(JSON.parse(JSON.stringify(toPlainJsonSchema(schema))));
}

/** Up to three JSON pointers where `doc` and `sdk` differ, with both values. */
function differences(doc: unknown, sdk: unknown, pointer = ''): string[] {
  if (JSON.stringify(doc) === JSON.stringify(sdk)) return [];
  if (pointer.endsWith('/required') && Array.isArray(doc) && Array.isArray(sdk)) {
    const extra = (doc as string[]).filter((n) => !(sdk as string[]).includes(n));
    const missing = (sdk as string[]).filter((n) => !(doc as string[]).includes(n));
    if (extra.length === 0 && missing.length === 0) return [];
    const parts = [];
    if (extra.length > 0) parts.push(`document also requires ${extra.join(', ')}`);
    if (missing.length > 0) parts.push(`document does not require ${missing.join(', ')}`);
    return [`${pointer}: ${parts.join('; ')}`];
  }
  const bothObjects =
    doc !== null &&
    sdk !== null &&
    typeof doc === 'object' &&
    typeof sdk === 'object' &&
    Array.isArray(doc) === Array.isArray(sdk);
  if (!bothObjects) return [`${pointer || '/'}: document ${short(doc)}, SDK ${short(sdk)}`];
  const keys = new Set([...Object.keys(doc), ...Object.keys(sdk)]);
  const out: string[] = [];
  for (const key of keys) {
    out.push(...differences((doc as Json)[key], (sdk as Json)[key], `${pointer}/${key}`));
    if (out.length >= 3) break;
  }
  return out.slice(0, 3);
}

const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addFormat('binary', true);
const validators = new Map<string, ValidateFunction>();
function validatorFor(schema: unknown): ValidateFunction {
  const key = JSON.stringify(schema);
  let v = validators.get(key);
  if (!v) {
    v = ajv.compile(schema as Json);
    validators.set(key, v);
  }
  return v;
}

/** An untyped answer: no schema, `{}`, or a bare `{ type: 'object' }`. */
function untyped(schema: unknown): boolean {
  if (schema === undefined || schema === null || typeof schema !== 'object') return true;
  const keys = Object.keys(schema).filter((k) => k !== 'description');
  return keys.length === 0 || (keys.length === 1 && (schema as Json)['type'] === 'object');
}

// ---- the product SDK's own response checks (src/client.ts) ----

/** assertJsonResponse: the check every SDK call but files.download makes. */
function sdkAcceptsJsonCheck(contentType: string): boolean {
  const t = contentType.toLowerCase();
  return t === '' || t.includes('json') || t.includes('octet-stream') || t.includes('zip');
}

/** assertBinaryResponse: files.download's check. */
function sdkAcceptsBinaryCheck(contentType: string): boolean {
  const t = contentType.toLowerCase();
  return t === '' || (!t.includes('html') && !t.includes('json'));
}

// ---- the OpenAPI document ----

interface DocOperation {
  method: string;
  path: string;
  matcher: RegExp;
  op: Json;
}

let doc: Json;
let components: Record<string, unknown>;
let docOperations: DocOperation[];

function docOperationFor(method: string, urlPath: string): DocOperation | undefined {
  return docOperations
    .filter((d) => d.method === method && d.matcher.test(urlPath))
    .sort((a, b) => b.path.replace(/\{[^}]+\}/g, '').length - a.path.replace(/\{[^}]+\}/g, '').length)[0];
}

function responseFor(op: Json, status: number): Json | undefined {
  const responses = (op['responses'] ?? {}) as Record<string, Json>;
  return responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses['default'];
}

// ---- checks of one recorded exchange ----

async function checkExchange(ex: Exchange): Promise<void> {
  const name = sdkOperationOfRequest(ex.method, ex.url.pathname);
  if (name === undefined) return; // not an SDK operation (a storage PUT, the OpenAPI document)
  const sdk = SDK_OPERATIONS[name];
  const found = docOperationFor(ex.method, ex.url.pathname);
  if (!found) return; // reported by the document checks
  const status = ex.status;
  const media = ex.contentType.split(';')[0]!.trim().toLowerCase();
  const bytes = await ex.body;
  if (!(status in sdk.responses))
    problem(
      name,
      status,
      '',
      `answered ${status}, a status the SDK does not declare (${Object.keys(sdk.responses).join(', ')})`,
    );
  const success = status >= 200 && status < 300;
  if (success) {
    const ok =
      name === 'filesContentGet'
        ? sdkAcceptsBinaryCheck(ex.contentType)
        : sdkAcceptsJsonCheck(ex.contentType);
    if (!ok)
      problem(
        name,
        status,
        '',
        name === 'filesContentGet'
          ? `content type '${ex.contentType}' fails the SDK's download check (no JSON, no HTML)`
          : `content type '${ex.contentType}' fails the SDK's response check (JSON, application/octet-stream, application/zip or none)`,
      );
  }
  const response = responseFor(found.op, status);
  if (!response) {
    const declared = Object.keys(found.op['responses'] ?? {}).join(', ');
    problem(name, status, '', `answered ${status}, which the document does not declare (${declared})`);
    return;
  }
  const content = (response['content'] ?? {}) as Record<string, Json>;
  if (bytes.length === 0 && Object.keys(content).length === 0) return;
  if (bytes.length === 0 && status === 204) {
    return;
  }
  const entry = content[media] ?? content['*/*'];
  if (!entry) {
    problem(
      name,
      status,
      '',
      `content type '${media}' is not declared (document: ${Object.keys(content).join(', ') || 'none'})`,
    );
    return;
  }
  const schema = deref(entry['schema'], components);
  if (schema === undefined || (schema as Json)['type'] === 'string') return; // bytes or text, any content
  if (!media.includes('json') || media.includes('ndjson')) return;
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    problem(name, status, '', `body is not JSON: ${short(Buffer.from(bytes).toString('utf8'))}`);
    return;
  }
  validated.count += 1;
  validateAgainst(name, status, schema, body, '');
  // The body against the SDK's own type as well: where the document drifted from the SDK, this
  // says whether the answer itself breaks an SDK caller.
  const sdkContent = (sdk.responses as Record<number, { content: Record<string, TSchema> } | undefined>)[
    status
  ]?.content;
  const sdkType = sdkContent?.[media] ?? sdkContent?.['application/json'];
  if (sdkType && (sdkType as { type?: string }).type !== 'string')
    validateAgainst(name, status, sdkSchema(sdkType), body, ' (against the SDK type)');
}

const validated = { count: 0 };

function validateAgainst(name: string, status: number, schema: unknown, body: unknown, suffix: string): void {
  const validate = validatorFor(schema);
  if (validate(body)) return;
  for (const error of validate.errors ?? []) {
    const detail =
      error.keyword === 'additionalProperties'
        ? `unexpected field '${String((error.params as { additionalProperty?: string }).additionalProperty)}'`
        : error.keyword === 'required'
          ? `missing required field '${String((error.params as { missingProperty?: string }).missingProperty)}'`
          : `${error.message ?? error.keyword} (value ${short(valueAt(body, error.instancePath))})`;
    problem(name, status, error.instancePath || '/', detail + suffix);
  }
}

function valueAt(value: unknown, pointer: string): unknown {
  let current = value;
  for (const part of pointer.split('/').slice(1)) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Json)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return current;
}

// ---- checks of the document against SDK_OPERATIONS ----

/** What the service accepts beyond the SDK (extra query parameters, request content types). */
const extensions: string[] = [];
/** Query parameters the service reads as more than text (see textNarrowing). */
const narrowings: string[] = [];

function checkDocument(): void {
  const byName = new Map<SdkOperationName, DocOperation>();
  for (const d of docOperations) {
    const name = sdkOperationOfRoute(d.method, d.path);
    if (name) byName.set(name, d);
  }
  const envelope = sdkSchema(ApiErrorEnvelope);
  for (const name of SDK_OPERATION_NAMES) {
    const sdk = SDK_OPERATIONS[name];
    const d = byName.get(name);
    if (!d) {
      problem(name, '-', '', `no route for ${sdk.method} ${sdk.path} in the OpenAPI document`);
      continue;
    }
    if (d.op['operationId'] !== name)
      problem(name, '-', '', `operationId is ${String(d.op['operationId'])}, not the SDK's name`);
    const responses = (d.op['responses'] ?? {}) as Record<string, Json>;
    // Success statuses and their bodies.
    const sdkSuccess = Object.keys(sdk.responses).filter((s) => s.startsWith('2'));
    const docSuccess = Object.keys(responses).filter((s) => s.startsWith('2'));
    for (const s of docSuccess) {
      if (!sdkSuccess.includes(s))
        problem(name, s, '', `document declares ${s}, the SDK does not (${sdkSuccess.join(', ')})`);
      const content = (responses[s]!['content'] ?? {}) as Record<string, Json>;
      const sdkContent = (sdk.responses as Record<string, { content: Record<string, TSchema> } | undefined>)[
        s
      ]?.content;
      for (const [type, entry] of Object.entries(content))
        // Untyped is what the SDK says of a few answers (`unknown`): then the document says it too.
        if (
          untyped(entry['schema']) &&
          s !== '204' &&
          !untyped(sdkContent?.[type] && sdkSchema(sdkContent[type]))
        )
          problem(name, s, '', `untyped ${type} response schema in the document (${short(entry['schema'])})`);
    }
    for (const s of sdkSuccess) {
      const wanted = (sdk.responses as Record<string, { content: Record<string, TSchema> }>)[s]!.content;
      if (!(s in responses)) {
        problem(
          name,
          s,
          '',
          `the SDK declares ${s}, the document does not (${docSuccess.join(', ') || 'none'})`,
        );
        continue;
      }
      const content = (responses[s]!['content'] ?? {}) as Record<string, Json>;
      for (const [type, schema] of Object.entries(wanted)) {
        const expected = sdkSchema(schema);
        if (type === '*/*') {
          const any = Object.entries(content).some(
            ([, e]) => differences(withoutIds(deref(e['schema'], components)), expected).length === 0,
          );
          if (!any)
            problem(
              name,
              s,
              '',
              `the SDK answers raw bytes of any type; document declares ${short(Object.fromEntries(Object.entries(content).map(([t, e]) => [t, e['schema']])))}`,
            );
          continue;
        }
        const entry = content[type];
        if (!entry) {
          problem(
            name,
            s,
            '',
            `content type ${type} of the SDK is not declared (document: ${Object.keys(content).join(', ') || 'none'})`,
          );
          continue;
        }
        for (const diff of differences(withoutIds(deref(entry['schema'], components)), expected))
          problem(
            name,
            s,
            diff.split(':')[0]!,
            `schema differs from the SDK's: ${diff.slice(diff.indexOf(':') + 2)}`,
          );
      }
      for (const type of Object.keys(content))
        if (!(type in wanted) && !('*/*' in wanted))
          problem(
            name,
            s,
            '',
            `document declares content type ${type}, the SDK does not (${Object.keys(wanted).join(', ')})`,
          );
    }
    // Error statuses: the SDK's envelope on each (one line per operation and difference).
    const undeclared: string[] = [];
    const envelopeDiffs = new Map<string, string[]>();
    for (const s of Object.keys(sdk.responses).filter((x) => !x.startsWith('2'))) {
      const r = responses[s] ?? responses[`${s[0]}XX`];
      if (!r) {
        undeclared.push(s);
        continue;
      }
      const schema = ((r['content'] ?? {}) as Record<string, Json>)['application/json']?.['schema'];
      for (const diff of differences(withoutIds(deref(schema, components)), envelope))
        envelopeDiffs.set(diff, [...(envelopeDiffs.get(diff) ?? []), s]);
    }
    if (undeclared.length > 0)
      problem(name, undeclared.join(','), '', 'error statuses of the SDK not declared in the document');
    for (const [diff, statuses] of envelopeDiffs)
      problem(
        name,
        statuses.join(','),
        diff.split(':')[0]!,
        `error body differs from ApiErrorEnvelope: ${diff.slice(diff.indexOf(':') + 2)}`,
      );
    // Query parameters, as the SDK names them.
    const params = ((d.op['parameters'] ?? []) as Json[]).filter((p) => p['in'] === 'query');
    const sdkQuery =
      'query' in sdk
        ? (sdk as { query: { properties: Record<string, TSchema>; required?: string[] } }).query
        : undefined;
    const sdkNames = Object.keys(sdkQuery?.properties ?? {});
    for (const p of params) {
      const pname = String(p['name']);
      if (!sdkNames.includes(pname)) {
        extensions.push(`${name}: query parameter ${pname}`);
        continue;
      }
      const docParam = requestShape(withoutIds(deref(p['schema'], components)));
      const sdkParam = requestShape(sdkSchema(sdkQuery!.properties[pname]!));
      const readAs = textNarrowing(docParam, sdkParam);
      if (readAs !== undefined && sentAndAccepted(name, pname)) {
        narrowings.push(`${name}: query ${pname} (SDK string) read as ${readAs}`);
        continue;
      }
      for (const diff of differences(docParam, sdkParam))
        problem(
          name,
          'query',
          `/${pname}${diff.split(':')[0] === '/' ? '' : diff.split(':')[0]}`,
          `schema differs from the SDK's: ${diff.slice(diff.indexOf(':') + 2)}`,
        );
      const required = (sdkQuery!.required ?? []).includes(pname);
      if (Boolean(p['required']) !== required)
        problem(
          name,
          'query',
          `/${pname}`,
          `required is ${String(Boolean(p['required']))} in the document, ${String(required)} in the SDK`,
        );
    }
    for (const n of sdkNames)
      if (!params.some((p) => p['name'] === n))
        problem(name, 'query', `/${n}`, 'query parameter of the SDK not declared');
    // Request bodies per content type.
    const sdkBody =
      'body' in sdk ? (sdk as { body: { content: Record<string, TSchema> } }).body.content : undefined;
    const docBody = ((d.op['requestBody'] as Json | undefined)?.['content'] ?? undefined) as
      Record<string, Json> | undefined;
    if (sdkBody && !docBody) problem(name, 'body', '', 'the SDK sends a body; the document declares none');
    if (!sdkBody && docBody)
      problem(
        name,
        'body',
        '',
        `the document declares a body (${Object.keys(docBody).join(', ')}); the SDK sends none`,
      );
    if (sdkBody && docBody) {
      for (const [type, schema] of Object.entries(sdkBody)) {
        const entry = docBody[type];
        if (!entry) {
          problem(
            name,
            'body',
            '',
            `request content type ${type} of the SDK not declared (document: ${Object.keys(docBody).join(', ')})`,
          );
          continue;
        }
        const sdkBodyShape = requestShape(sdkSchema(schema));
        const docBodyShape = withoutWidenings(
          requestShape(withoutIds(deref(entry['schema'], components))),
          sdkBodyShape,
          `${name}: ${type} body`,
        );
        for (const diff of differences(docBodyShape, sdkBodyShape))
          problem(
            name,
            'body',
            diff.split(':')[0]!,
            `${type} schema differs from the SDK's: ${diff.slice(diff.indexOf(':') + 2)}`,
          );
      }
      for (const type of Object.keys(docBody))
        if (!(type in sdkBody)) extensions.push(`${name}: request body as ${type}`);
    }
  }
}

/** One line per problem; a problem shared by many operations is listed once with their names. */
function report(list: readonly Problem[]): string {
  const groups = new Map<string, Problem[]>();
  for (const p of list) {
    const key = `${p.status}\u0000${p.pointer}\u0000${p.problem}`;
    groups.set(key, [...(groups.get(key) ?? []), p]);
  }
  const lines: string[] = [];
  for (const group of groups.values()) {
    const first = group[0]!;
    const names = [...new Set(group.map((g) => g.op))];
    const others = SDK_OPERATION_NAMES.filter((n) => !names.includes(n));
    const ops =
      names.length <= 3
        ? names.join(', ')
        : others.length < names.length
          ? `${names.length} operations (all but ${others.join(', ') || 'none'})`
          : `${names.length} operations (${names.join(', ')})`;
    lines.push(`${ops} | ${first.status} | ${first.pointer || '-'} | ${first.problem}`);
  }
  return lines.sort().join('\n');
}

// ---- the run ----

describe('every SDK operation through our client, checked against the OpenAPI document', () => {
  let h: Harness;
  let client: ServiceClient;
  const realFetch = globalThis.fetch;

  before(async () => {
    h = await startHarness();
    release(h.registryPath, {
      'workflows/boom/manifest.json': workflowManifest('Boom'),
      'workflows/boom/index.js':
        "export default { steps: [{ name: 'explode', run: () => { throw new Error('kaboom'); } }] };\n",
    });
    gitIn(h.registryPath, ['tag', '-a', 'workflows.boom@1.0.0', '-m', 'boom']);
    const openapi = await h.api('GET', '/openapi.json');
    assert.equal(openapi.status, 200);
    doc = openapi.body as Json;
    components = ((doc['components'] as Json | undefined)?.['schemas'] ?? {}) as Record<string, unknown>;
    docOperations = [];
    for (const [path, item] of Object.entries(doc['paths'] as Record<string, Json>))
      for (const [method, op] of Object.entries(item))
        docOperations.push({
          method: method.toUpperCase(),
          path,
          matcher: pathMatcher(path),
          op: op as Json,
        });
    // Every exchange the client makes is recorded with its status, content type and a copy of
    // its body, so each answer can be checked whatever the client made of it.
    globalThis.fetch = async (input: string | URL | Request, init?: RequestInit) => {
      const response = await realFetch(input, init);
      const url = new URL(input instanceof Request ? input.url : String(input));
      const copy = response.clone();
      exchanges.push({
        method: (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase(),
        url,
        status: response.status,
        contentType: response.headers.get('content-type') ?? '',
        body: copy.arrayBuffer().then(
          (b) => new Uint8Array(b),
          () => new Uint8Array(),
        ),
      });
      return response;
    };
    client = new ServiceClient({
      api_key: h.token,
      base_url: h.url,
      env: {},
      max_retries: 0,
      timeout_seconds: 60,
    });
  });

  after(async () => {
    globalThis.fetch = realFetch;
    await h?.close();
  });

  /** Calls one operation; a failure is recorded (with what it prevents) and the run goes on. */
  async function call<T>(op: SdkOperationName, fn: () => Promise<T>): Promise<T | undefined> {
    try {
      return await fn();
    } catch (error) {
      const status = (error as { status?: number }).status;
      notes.set(op, `call failed: ${(error as Error).message}`);
      problem(op, status ?? '-', '', `call through the client failed: ${(error as Error).message}`);
      return undefined;
    }
  }

  function skipped(ops: SdkOperationName[], because: string): void {
    for (const op of ops) if (!notes.has(op)) notes.set(op, `not called: ${because}`);
  }

  async function finished(started: RunStartResponse | undefined): Promise<Run | undefined> {
    if (!started) return undefined;
    if (started.finished) return started;
    return waitUntil(`run ${started.id} to finish`, async () => {
      const run = await client.runs.get(started.id);
      return run.finished ? run : undefined;
    });
  }

  it('answers every operation with the shape its OpenAPI document and the SDK declare', async () => {
    // Identity and automations.
    await call('authCheck', () => client.auth.check());
    await call('automationsList', () => client.automations.list({ type: 'workflow', limit: 10 }));
    await call('automationsGet', () => client.automations.get(A));
    await call('automationsSync', () => client.automations.sync('workflows.boom'));
    await call('automationsVersionsList', () => client.automations.versions(A));
    await call('automationsTriggersGet', () => client.automations.triggers(A));

    // Runs: one that completes (JSON start), one with a file (multipart start), one that fails,
    // one cancelled in flight, one whose file goes upload-first.
    const done = await finished(
      await call('runsStart', () => client.run(A, { text: 'hello shapes hello' }, { waitForCompletion: 30 })),
    );
    await call('runsStart', () =>
      client.run(
        A,
        { text: 'with a file', attachment: toFile('attached', 'note.txt', 'text/plain') },
        { waitForCompletion: 30 },
      ),
    );
    const failed = await finished(
      await call('runsStart', () => client.run('workflows.boom', {}, { waitForCompletion: 30 })),
    );
    if (failed && failed.execution.status !== 'failed')
      problem('runsStart', '-', '', `the boom run ended ${failed.execution.status}, not failed`);
    const slow = await call('runsStart', () => client.run(A, { text: 'slow', delay_ms: 60_000 }));
    if (slow) await call('runsCancel', () => client.runs.cancel(slow.id));
    else skipped(['runsCancel'], 'no run was started');
    const uploadFirst = new ServiceClient({
      api_key: h.token,
      base_url: h.url,
      env: {},
      max_retries: 0,
      multipart_max_bytes: 0,
    });
    await call('runsStart', () =>
      uploadFirst.run(
        A,
        { text: 'upload first', doc: toFile('upload-first bytes', 'doc.txt', 'text/plain') },
        { waitForCompletion: 30 },
      ),
    );

    await call('runsList', () => client.runs.list({ limit: 10 }));
    // Filters the SDK types as strings, sent as its callers spell them (see textNarrowing).
    await call('runsList', () =>
      client.runs.list({
        experiments: 'false',
        hasReview: 'false',
        noReview: 'true',
        hasCorrections: 'false',
        sinceLastClosed: 'false',
        sampleRate: '0.5',
      }),
    );
    if (failed) await call('runsGet', () => client.runs.get(failed.id));
    if (done) {
      const id = done.id;
      await call('runsGet', () => client.runs.get(id, { expand: ['input', 'usage', 'execution', 'debug'] }));
      await call('runsGet', () => client.runs.get(id, { expand: 'input' }));
      await call('runsEventsList', () => client.runs.events(id));
      await call('runsStepsList', () => client.runs.steps(id));
      await call('runsTraceGet', () => client.runs.trace.get(id));
      await call('runsUsageGet', () => client.runs.usage(id));
      await call('runsScoresList', () => client.runs.scores.list(id));
      const listing = await call('runsArtifactsList', () => client.runs.artifacts.list(id));
      await call('runsArtifactsList', () => client.runs.artifacts.zip(id));
      const first = listing?.artifacts?.[0] as unknown;
      const artifactPath =
        typeof first === 'string'
          ? first
          : ((first as { path?: string } | undefined)?.path ?? 'output/report.md');
      await call('runsArtifactsGet', () => client.runs.artifacts.download(id, artifactPath));
      await call('runsRerun', () => client.rerun(id, { wait_for_completion: 30 }));

      // Review with corrections and expected files, then promote it into the dataset.
      await call('runsReviewsUpdate', () =>
        client.runs.reviews.update(id, {
          verdict: 'incorrect',
          note: 'one word too many',
          correctedOutput: { words: 2 },
          corrections: [{ kind: 'field', path: '/words', correctedValue: 2 }],
        }),
      );
      await call('runsReviewsGet', () => client.runs.reviews.get(id));
      await call('runsReviewsExpectedCreate', () =>
        client.runs.reviews.uploadExpected(id, toFile('# fixed\n', 'fixed.md', 'text/markdown'), {
          name: 'fixed.md',
        }),
      );
      await call('runsReviewsExpectedCreate', () =>
        client.runs.reviews.copyOutputToExpected(id, 'report.md', { expectedName: 'report.md' }),
      );
      await call('runsReviewsExpectedGet', () => client.runs.reviews.listExpected(id));
      await call('runsReviewsExpectedFileGet', () => client.runs.reviews.downloadExpected(id, 'report.md'));
      await call('runsReviewsExpectedFileUpdate', () =>
        client.runs.reviews.renameExpected(id, 'fixed.md', 'fixed2.md'),
      );
      await call('runsReviewsExpectedFileDelete', () => client.runs.reviews.deleteExpected(id, 'fixed2.md'));
      await call('automationsReviewsHealth', () =>
        client.automations.reviews.health(A, { bucket: 'day', experiments: 'true' }),
      );
      await call('runsPromote', () => client.runs.promote(id, { name: 'promoted from a review' }));
      await call('runsReviewsClear', () => client.runs.reviews.clear(id));
    } else
      skipped(
        [
          'runsEventsList',
          'runsStepsList',
          'runsTraceGet',
          'runsUsageGet',
          'runsScoresList',
          'runsArtifactsList',
          'runsArtifactsGet',
          'runsRerun',
          'runsReviewsUpdate',
          'runsReviewsGet',
          'runsReviewsExpectedCreate',
          'runsReviewsExpectedGet',
          'runsReviewsExpectedFileGet',
          'runsReviewsExpectedFileUpdate',
          'runsReviewsExpectedFileDelete',
          'automationsReviewsHealth',
          'runsPromote',
          'runsReviewsClear',
        ],
        'no run completed',
      );

    // A dataset example with input and expected files.
    const examples = client.automations.examples;
    const ex = await call('automationsExamplesCreate', () =>
      examples.create(A, {
        name: 'shapes example',
        input: { text: 'alpha beta' },
        expected: { text: 'alpha beta' },
      }),
    );
    await call('automationsExamplesList', () => examples.list(A, { limit: 10 }));
    if (ex) {
      await call('automationsExamplesGet', () => examples.get(A, ex.id));
      await call('automationsExamplesUpdate', () =>
        examples.update(A, ex.id, { annotation: 'checked by the shape test' }),
      );
      await call('automationsExamplesInputFilesCreate', () =>
        examples.inputFiles.create(A, ex.id, {
          'docs/in.txt': toFile('input bytes', 'in.txt', 'text/plain'),
        }),
      );
      await call('automationsExamplesInputFilesList', () => examples.inputFiles.list(A, ex.id));
      await call('automationsExamplesInputFileGet', () => examples.inputFile.get(A, ex.id, 'docs/in.txt'));
      await call('automationsExamplesInputFileUpdate', () =>
        examples.inputFile.update(A, ex.id, 'docs/in.txt', { newFilename: 'in2.txt' }),
      );
      await call('automationsExamplesExpectedFilesCreate', () =>
        examples.expectedFiles.create(A, ex.id, {
          'out.txt': toFile('expected bytes', 'out.txt', 'text/plain'),
        }),
      );
      await call('automationsExamplesExpectedFilesList', () => examples.expectedFiles.list(A, ex.id));
      await call('automationsExamplesExpectedFileGet', () => examples.expectedFile.get(A, ex.id, 'out.txt'));
      await call('automationsExamplesExpectedFileUpdate', () =>
        examples.expectedFile.update(A, ex.id, 'out.txt', { newFilename: 'out2.txt' }),
      );
      await call('automationsExamplesRun', () => examples.run(A, ex.id));
    } else
      skipped(
        [
          'automationsExamplesGet',
          'automationsExamplesUpdate',
          'automationsExamplesInputFilesCreate',
          'automationsExamplesInputFilesList',
          'automationsExamplesInputFileGet',
          'automationsExamplesInputFileUpdate',
          'automationsExamplesInputFileDelete',
          'automationsExamplesExpectedFilesCreate',
          'automationsExamplesExpectedFilesList',
          'automationsExamplesExpectedFileGet',
          'automationsExamplesExpectedFileUpdate',
          'automationsExamplesExpectedFileDelete',
          'automationsExamplesRun',
          'automationsExamplesDelete',
          'automationsExperimentsCreate',
          'automationsExperimentsCreateStream',
        ],
        'no example was created',
      );

    // Dataset round trip, evaluator config.
    const zip = await call('automationsDatasetExport', () => client.automations.dataset.export(A));
    if (zip)
      await call('automationsDatasetImport', () =>
        client.automations.dataset.import(A, zip, { mode: 'append' }),
      );
    else skipped(['automationsDatasetImport'], 'no dataset archive was exported');
    await call('automationsEvaluatorsUpdate', () =>
      client.automations.evaluators.update(
        A,
        'passThreshold: 0.5\nevaluators:\n  - name: same-text\n    type: equals\n    path: /text\n    value: { $expected: /text }\n',
      ),
    );
    await call('automationsEvaluatorsGet', () => client.automations.evaluators.get(A));

    // Experiments: one followed to its end over NDJSON, one created and cancelled.
    const experiments = client.automations.experiments;
    let streamed: string | undefined;
    if (ex) {
      const text = await call('automationsExperimentsCreateStream', async () =>
        new Response(await experiments.createStream(A, { examples: [ex.id] })).text(),
      );
      for (const line of (text ?? '').split('\n').filter((l) => l.trim().length > 0)) {
        const event = JSON.parse(line) as { experimentId?: string; id?: string };
        streamed ??= event.experimentId;
      }
      if (text !== undefined && streamed === undefined)
        problem(
          'automationsExperimentsCreateStream',
          200,
          '',
          `no event names the experiment: ${short(text)}`,
        );
      const created = await call('automationsExperimentsCreate', () =>
        experiments.create(A, { examples: [ex.id] }),
      );
      if (created) await call('automationsExperimentsCancel', () => experiments.cancel(A, created.id));
      else skipped(['automationsExperimentsCancel'], 'no experiment was created');
    } else skipped(['automationsExperimentsCancel'], 'no example was created');
    await call('automationsExperimentsList', () => experiments.list(A, { limit: 10 }));
    if (streamed) {
      const expId = streamed;
      await call('automationsExperimentsGet', () => experiments.get(A, expId));
      await call('automationsExperimentsExport', () => experiments.export(A, expId, { format: 'csv' }));
      await call('experimentsResolve', () => client.experiments.resolve(expId));
    } else
      skipped(
        ['automationsExperimentsGet', 'automationsExperimentsExport', 'experimentsResolve'],
        'no experiment id from the stream',
      );
    await call('automationsExperimentsExportAll', () => experiments.exportAll(A, { format: 'json' }));

    if (ex) {
      await call('automationsExamplesInputFileDelete', () =>
        examples.inputFile.delete(A, ex.id, 'docs/in2.txt'),
      );
      await call('automationsExamplesExpectedFileDelete', () =>
        examples.expectedFile.delete(A, ex.id, 'out2.txt'),
      );
      await call('automationsExamplesDelete', () => examples.delete(A, ex.id));
    }

    // Reusable files: one multipart POST, the upload-first protocol, an aborted upload.
    const stored = await call('filesCreate', () =>
      client.files.create(toFile('abc', 'abc.txt', 'text/plain')),
    );
    await call('filesUploadsCreate', () =>
      client.files.upload(toFile('uploaded first', 'u.txt', 'text/plain')),
    );
    const session = await call('filesUploadsCreate', () =>
      client.files.createUpload({ filename: 'abort.txt', contentType: 'text/plain', size: 5 }),
    );
    if (session?.transport === 'presigned-put') {
      const uploadId = session.uploadId;
      await call('filesUploadsAbort', () => client.files.abortUpload(uploadId));
    } else if (session)
      skipped(
        ['filesUploadsAbort', 'filesUploadsComplete'],
        "createUpload answered transport 'multipart', which has no upload id",
      );
    if (stored) {
      await call('filesGet', () => client.files.get(stored.id));
      await call('filesContentGet', () => client.files.download(stored.id));
      await call('filesDelete', () => client.files.delete(stored.id));
    } else skipped(['filesGet', 'filesContentGet', 'filesDelete'], 'no file was stored');

    // Check every recorded answer, then the document itself.
    for (const ex of exchanges) await checkExchange(ex);
    checkDocument();
    const answered = new Set(
      exchanges
        .filter((e) => e.status >= 200 && e.status < 300)
        .map((e) => sdkOperationOfRequest(e.method, e.url.pathname))
        .filter((n): n is SdkOperationName => n !== undefined),
    );
    for (const name of SDK_OPERATION_NAMES)
      if (!answered.has(name))
        problem(name, '-', '', `never answered 2xx through the client (${notes.get(name) ?? 'not called'})`);
    if (validated.count === 0) problem('-', '-', '', 'no JSON answer was validated at all');
    console.log(`${exchanges.length} exchanges recorded, ${validated.count} JSON bodies validated`);
    if (extensions.length > 0)
      console.log(`accepted beyond the SDK (not failures):\n  ${extensions.join('\n  ')}`);
    if (narrowings.length > 0)
      console.log(`query text read as typed values (not failures):\n  ${narrowings.join('\n  ')}`);
    assert.equal(
      problems.length,
      0,
      `${problems.length} mismatches (operation | status | pointer | problem):\n${report(problems)}`,
    );
  });
});
