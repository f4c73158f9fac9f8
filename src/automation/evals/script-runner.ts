// Runs tenant-written code in a piscina worker: custom-script evaluators, regex evaluators and
// validations against JSON Schemas with `pattern` (schema-check.ts). A script is compiled as a
// function body in a fresh node:vm context per task, so scripts share nothing; the vm timeout
// stops loops (also microtask loops, via microtaskMode 'afterEvaluate') and backtracking
// regexes; the worker's resourceLimits stop heap bombs by killing this thread, which the pool
// side reports. Data goes in and out of a script as JSON text parsed inside the context, so the
// script never holds an object of the worker's realm (whose constructors would lead back to
// `process`).
import * as vm from 'node:vm';
import type { MessagePort } from 'node:worker_threads';
import { issuesOf, type SchemaIssue } from './schema-check.js';
import { compileSchema } from '../schemas/compiler.js';

export const SCRIPT_PARAMS = ['output', 'actual', 'expected', 'input'] as const;
const MAX_RESULT_CHARS = 256 * 1024;

export interface ScriptTask {
  readonly kind?: 'script';
  readonly script: string;
  /** JSON text of `{ output, expected, input }`. */
  readonly data: string;
  readonly timeoutMs: number;
  /** Told when the task starts, so the pool's backstop timer excludes queueing time. */
  readonly port?: MessagePort;
}

/** A user regex run off the server thread, because a backtracking pattern can take minutes. */
export interface RegexTask {
  readonly kind: 'regex';
  readonly pattern: string;
  readonly flags: string;
  readonly text: string;
  readonly timeoutMs: number;
  readonly port?: MessagePort;
}

/** A JSON Schema validation whose schema holds user patterns (see schema-check.ts). */
export interface SchemaTask {
  readonly kind: 'schema';
  readonly schema: boolean | Record<string, unknown>;
  readonly value: unknown;
  readonly timeoutMs: number;
  readonly port?: MessagePort;
}

export type SchemaTaskResult =
  | { readonly ok: true; readonly valid: boolean; readonly issues: readonly SchemaIssue[] }
  | { readonly ok: false; readonly kind: 'timeout' | 'threw'; readonly message: string };

export type RegexTaskResult =
  | { readonly ok: true; readonly match: null | { readonly text: string; readonly index: number } }
  | { readonly ok: false; readonly kind: 'timeout' | 'threw'; readonly message: string };

export type ScriptTaskResult =
  | { readonly ok: true; readonly json: string }
  | { readonly ok: false; readonly kind: 'timeout' | 'threw' | 'compile'; readonly message: string };

// Binary buffers live outside the V8 heap, so resourceLimits would not bound them; eval-like
// code generation is off for the same reason as in any sandbox.
const REMOVED_GLOBALS = [
  'ArrayBuffer',
  'SharedArrayBuffer',
  'DataView',
  'Atomics',
  'WebAssembly',
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
  'FinalizationRegistry',
  'WeakRef',
];

const PRELUDE = new vm.Script(
  `"use strict";
  for (const name of ${JSON.stringify(REMOVED_GLOBALS)}) delete globalThis[name];
  {
    const logs = [];
    const add = (...args) => { if (logs.length < 50) logs.push(args.map((a) => typeof a === 'string' ? a : JSON.stringify(a)).join(' ').slice(0, 500)); };
    globalThis.console = { log: add, info: add, warn: add, error: add, debug: add };
    Object.defineProperty(globalThis, '__sluiceLogs', { value: logs });
  }`,
  { filename: 'evaluator-prelude.js' },
);

// Runs the user's function and serialises its result while still under the vm timeout,
// using JSON functions captured before user code could replace them.
const INVOKE = new vm.Script(
  `"use strict";
  (() => {
    const parse = JSON.parse, stringify = JSON.stringify, logs = __sluiceLogs;
    const d = parse(__sluiceData);
    let value, thrown = null;
    try {
      value = __sluiceFn(d.output, d.output, d.expected, d.input);
    } catch (e) {
      try { thrown = (e && typeof e === 'object' && 'message' in e) ? String(e.name || 'Error') + ': ' + String(e.message) : 'threw ' + String(e); }
      catch { thrown = 'threw an unprintable value'; }
    }
    if (thrown !== null) return stringify({ thrown, logs });
    if (value !== null && typeof value === 'object' && typeof value.then === 'function') {
      return stringify({ thrown: 'the script returned a Promise; evaluator scripts are synchronous', logs });
    }
    let json;
    try { json = stringify(value === undefined ? null : value); }
    catch (e) { json = undefined; }
    if (typeof json !== 'string') return stringify({ thrown: 'the result is not JSON-serialisable', logs });
    return '{"value":' + json + ',"logs":' + stringify(logs) + '}';
  })()`,
  { filename: 'evaluator-invoke.js' },
);

function messageOf(err: unknown): string {
  try {
    if (err !== null && typeof err === 'object' && 'message' in err) return String(err.message);
    return String(err);
  } catch {
    return 'unprintable error';
  }
}

// One context per worker serves every regex task: it runs no user code besides the pattern.
let regexContext: vm.Context | undefined;
const REGEX_EXEC = new vm.Script(
  '(() => { const m = new RegExp(__p, __f).exec(__t); return m === null ? null : [m[0], m.index]; })()',
);

function runRegexTask(task: RegexTask): RegexTaskResult {
  regexContext ??= vm.createContext(Object.create(null) as object, {
    codeGeneration: { strings: false, wasm: false },
  });
  Object.assign(regexContext, { __p: task.pattern, __f: task.flags, __t: task.text });
  try {
    const m = REGEX_EXEC.runInContext(regexContext, { timeout: task.timeoutMs }) as [string, number] | null;
    return { ok: true, match: m === null ? null : { text: String(m[0]).slice(0, 200), index: Number(m[1]) } };
  } catch (err) {
    return timedOutOrThrew(err, `the regular expression ran longer than ${task.timeoutMs} ms`);
  } finally {
    Object.assign(regexContext, { __p: '', __f: '', __t: '' });
  }
}

/** The failure of a vm run with a time limit: the limit's own message, or what was thrown. */
function timedOutOrThrew(
  err: unknown,
  timeoutMessage: string,
): { ok: false; kind: 'timeout' | 'threw'; message: string } {
  const code = err !== null && typeof err === 'object' ? (err as { code?: unknown }).code : undefined;
  if (code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return { ok: false, kind: 'timeout', message: timeoutMessage };
  return { ok: false, kind: 'threw', message: messageOf(err) };
}

let schemaContext: vm.Context | undefined;
const SCHEMA_RUN = new vm.Script('__run()');

function runSchemaTask(task: SchemaTask): SchemaTaskResult {
  let validate: ReturnType<typeof compileSchema>;
  try {
    validate = compileSchema(task.schema);
  } catch (err) {
    return { ok: false, kind: 'threw', message: `the schema does not compile: ${messageOf(err)}` };
  }
  // The vm timeout interrupts whatever JavaScript runs while the script does, including ajv's
  // generated code and the RegExps it calls, which live in this worker's own realm.
  schemaContext ??= vm.createContext(Object.create(null) as object, {
    codeGeneration: { strings: false, wasm: false },
  });
  Object.assign(schemaContext, { __run: () => validate(task.value) });
  try {
    const valid = SCHEMA_RUN.runInContext(schemaContext, { timeout: task.timeoutMs }) === true;
    return { ok: true, valid, issues: valid ? [] : issuesOf(validate.errors) };
  } catch (err) {
    return timedOutOrThrew(
      err,
      `validation against the schema ran longer than ${task.timeoutMs} ms and was stopped (a "pattern" that backtracks?)`,
    );
  } finally {
    Object.assign(schemaContext, { __run: undefined });
  }
}

export function runPoolTask(
  task: ScriptTask | RegexTask | SchemaTask,
): ScriptTaskResult | RegexTaskResult | SchemaTaskResult {
  task.port?.postMessage('started');
  task.port?.close();
  if (task.kind === 'schema') return runSchemaTask(task);
  return task.kind === 'regex' ? runRegexTask(task) : runScriptTask(task);
}

function runScriptTask(task: ScriptTask): ScriptTaskResult {
  const sandbox: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  const context = vm.createContext(sandbox, {
    name: 'evaluator',
    codeGeneration: { strings: false, wasm: false },
    microtaskMode: 'afterEvaluate',
  });
  PRELUDE.runInContext(context);
  let fn: unknown;
  try {
    fn = vm.compileFunction(task.script, [...SCRIPT_PARAMS], {
      parsingContext: context,
      filename: 'evaluator.js',
    });
  } catch (err) {
    return { ok: false, kind: 'compile', message: messageOf(err) };
  }
  Object.defineProperty(sandbox, '__sluiceFn', { value: fn });
  Object.defineProperty(sandbox, '__sluiceData', { value: task.data });
  try {
    const out: unknown = INVOKE.runInContext(context, { timeout: task.timeoutMs, breakOnSigint: false });
    if (typeof out !== 'string')
      return { ok: false, kind: 'threw', message: 'the script produced no result' };
    // The main thread parses this; a script stuffing its logs or result must not make it big.
    if (out.length > MAX_RESULT_CHARS) {
      return {
        ok: false,
        kind: 'threw',
        message: `the result and logs exceed ${MAX_RESULT_CHARS} characters`,
      };
    }
    return { ok: true, json: out };
  } catch (err) {
    return timedOutOrThrew(err, `the script ran longer than ${task.timeoutMs} ms`);
  }
}
