// Per-type fields of an evaluator: which keys each type accepts, their defaults, and the
// checks that must hold before the config is stored (regexes, schemas and scripts compile).
import * as vm from 'node:vm';
import { parseFieldPath } from './field-path.js';
import { pointerProblem } from './json-pointer.js';
import { type ConfigReader, type FieldPath, isMapping, type Mapping } from './config-reader.js';
import { schemaProblem } from '../schemas/compiler.js';
import { SCRIPT_PARAMS } from './script-runner.js';
import type { EvaluatorSpec, EvaluatorType, Operand } from './types.js';

export interface BaseFields {
  readonly name: string;
  readonly weight: number;
  readonly threshold: number | undefined;
  readonly description?: string;
}

export const DEFAULT_THRESHOLDS: Readonly<Record<EvaluatorType, number>> = {
  'exact-diff': 1,
  equals: 1,
  contains: 1,
  regex: 1,
  'is-json': 1,
  'json-schema': 1,
  similar: 0.8,
  'file-equals': 1,
  'custom-script': 0.7,
  'llm-judge': 0.7,
};

/** Evaluator-level fields each type takes besides name, type, weight, threshold, description. */
export const TYPE_FIELDS: Readonly<Record<EvaluatorType, readonly string[]>> = {
  'exact-diff': ['config'],
  equals: ['path', 'value'],
  contains: ['path', 'value', 'config'],
  regex: ['path', 'value', 'pattern', 'config'],
  'is-json': ['path'],
  'json-schema': ['path', 'value', 'schema'],
  similar: ['path', 'value', 'config'],
  'file-equals': ['value'],
  'custom-script': ['value', 'script', 'config'],
  'llm-judge': ['path', 'config'],
};

/** Keys of `config` per type (`passThreshold` is accepted everywhere as Eigenpal's spelling). */
export const CONFIG_FIELDS: Readonly<Record<EvaluatorType, readonly string[]>> = {
  'exact-diff': ['paths', 'numericTolerance', 'allowExtraFields'],
  equals: [],
  contains: ['mode', 'ignoreCase'],
  regex: ['flags'],
  'is-json': [],
  'json-schema': [],
  similar: ['ignoreCase', 'normalizeWhitespace'],
  'file-equals': [],
  'custom-script': ['timeoutMs', 'memoryLimitMb'],
  'llm-judge': ['model', 'mode', 'labels', 'promptExtension', 'includeInput', 'timeoutMs'],
};

export const SCRIPT_LIMITS = {
  maxChars: 100_000,
  timeoutMs: { def: 5000, max: 60_000 },
  memoryMb: { def: 64, min: 16, max: 1024 },
};
export const JUDGE_LIMITS = { timeoutMs: { def: 60_000, max: 600_000 }, minPromptExtension: 10 };

interface TypeInput {
  readonly r: ConfigReader;
  readonly at: FieldPath;
  readonly m: Mapping;
  readonly cfg: Mapping;
  readonly base: BaseFields;
}

function path({ r, at, m }: TypeInput): string {
  if (m.path === undefined) return '';
  const p = r.string([...at, 'path'], m.path);
  if (p === undefined) return '';
  const problem = pointerProblem(p);
  if (problem !== null) r.error([...at, 'path'], `${problem}, got ${JSON.stringify(p)}`);
  return p;
}

/** `value` (or the type's alias for it), reporting both-given and missing. */
function operandField(
  t: TypeInput,
  alias: string | null,
  required: boolean,
): { key: string; value: unknown } | undefined {
  const { r, at, m } = t;
  if (alias !== null && m[alias] !== undefined && m.value !== undefined) {
    r.error([...at, alias], `give either "value" or "${alias}", not both`);
    return undefined;
  }
  const key = alias !== null && m[alias] !== undefined ? alias : 'value';
  if (m[key] === undefined) {
    if (required) r.error([...at, alias ?? 'value'], 'is required');
    return undefined;
  }
  return { key, value: m[key] };
}

/** A literal or `{ $expected: pointer }`; absent means the expected output at `samePath`. */
function operand(t: TypeInput, samePath: string): Operand {
  const field = operandField(t, null, false);
  if (field === undefined) return { expectedPointer: samePath };
  const v = field.value;
  if (isMapping(v) && '$expected' in v) {
    const at = [...t.at, 'value', '$expected'];
    if (Object.keys(v).length !== 1)
      t.r.error([...t.at, 'value'], 'a {$expected: pointer} reference has no other fields');
    const p = t.r.string(at, v.$expected);
    if (p === undefined) return { expectedPointer: '' };
    const problem = pointerProblem(p);
    if (problem !== null) t.r.error(at, `${problem}, got ${JSON.stringify(p)}`);
    return { expectedPointer: p };
  }
  return { literal: v };
}

function fileName(r: ConfigReader, at: FieldPath, v: unknown): string | undefined {
  const name = r.string(at, v, { minLength: 1, maxLength: 1024 });
  if (name === undefined) return undefined;
  const parts = name.split('/');
  if (
    name.startsWith('/') ||
    name.includes('\\') ||
    name.includes('\0') ||
    parts.some((p) => p === '' || p === '.' || p === '..')
  ) {
    r.error(
      at,
      `must be a relative file path without "..", "." or empty segments, got ${JSON.stringify(name)}`,
    );
    return undefined;
  }
  return name;
}

function scriptProblem(script: string): string | null {
  try {
    vm.compileFunction(script, [...SCRIPT_PARAMS], { filename: 'evaluator.js' });
    return null;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const line = err instanceof Error ? /evaluator\.js:(\d+)/.exec(err.stack ?? '')?.[1] : undefined;
    return line === undefined ? message : `${message} (line ${line} of the script)`;
  }
}

type Reader = (t: TypeInput, threshold: number) => EvaluatorSpec | undefined;

export const TYPE_READERS: Readonly<Record<EvaluatorType, Reader>> = {
  'exact-diff': (t, threshold) => {
    const { r, at, cfg, base } = t;
    const paths: string[] = [];
    if (cfg.paths !== undefined) {
      if (!Array.isArray(cfg.paths)) r.error([...at, 'config', 'paths'], 'must be a list of paths');
      else
        cfg.paths.forEach((p: unknown, i) => {
          const pat = [...at, 'config', 'paths', i];
          const s = r.string(pat, p);
          if (s === undefined) return;
          const parsed = parseFieldPath(s);
          if ('error' in parsed) r.error(pat, `${parsed.error} in ${JSON.stringify(s)}`);
          else paths.push(s);
        });
    }
    const tol =
      cfg.numericTolerance === undefined
        ? 0
        : r.number([...at, 'config', 'numericTolerance'], cfg.numericTolerance, { min: 0 });
    const allowExtraFields = r.boolean([...at, 'config', 'allowExtraFields'], cfg.allowExtraFields, false);
    return { ...base, type: 'exact-diff', threshold, paths, numericTolerance: tol ?? 0, allowExtraFields };
  },
  equals: (t, threshold) => {
    const p = path(t);
    return { ...t.base, type: 'equals', threshold, path: p, value: operand(t, p) };
  },
  contains: (t, threshold) => {
    const { r, at, cfg } = t;
    const p = path(t);
    const field = operandField(t, null, true);
    const values: string[] = [];
    if (field !== undefined) {
      const list = Array.isArray(field.value) ? field.value : [field.value];
      if (list.length === 0) r.error([...at, 'value'], 'must name at least one string');
      list.forEach((v: unknown, i) => {
        const s = r.string(Array.isArray(field.value) ? [...at, 'value', i] : [...at, 'value'], v, {
          minLength: 1,
        });
        if (s !== undefined) values.push(s);
      });
    }
    const mode = r.oneOf([...at, 'config', 'mode'], cfg.mode, ['all', 'any'] as const, 'all');
    const ignoreCase = r.boolean([...at, 'config', 'ignoreCase'], cfg.ignoreCase, false);
    return { ...t.base, type: 'contains', threshold, path: p, values, mode, ignoreCase };
  },
  regex: (t, threshold) => {
    const { r, at, cfg } = t;
    const p = path(t);
    let flags = '';
    if (cfg.flags !== undefined) {
      const f = r.string([...at, 'config', 'flags'], cfg.flags);
      // g and y make RegExp stateful between runs; d only adds indices nobody reads here.
      if (f !== undefined && !/^[imsuv]*$/.test(f))
        r.error(
          [...at, 'config', 'flags'],
          `only the flags i, m, s, u, v are accepted, got ${JSON.stringify(f)}`,
        );
      else if (f !== undefined) flags = f;
    }
    const field = operandField(t, 'pattern', true);
    let pattern = '';
    if (field !== undefined) {
      const s = r.string([...at, field.key], field.value, { maxLength: 10_000 });
      if (s !== undefined) {
        pattern = s;
        try {
          new RegExp(s, flags);
        } catch (err) {
          r.error(
            [...at, field.key],
            `the regular expression does not compile: ${err instanceof Error ? err.message : String(err)}`,
          );
        }
      }
    }
    return { ...t.base, type: 'regex', threshold, path: p, pattern, flags };
  },
  'is-json': (t, threshold) => ({ ...t.base, type: 'is-json', threshold, path: path(t) }),
  'json-schema': (t, threshold) => {
    const { r, at } = t;
    const p = path(t);
    const field = operandField(t, 'schema', true);
    let schema: boolean | Mapping = true;
    if (field !== undefined) {
      if (typeof field.value === 'boolean' || isMapping(field.value)) {
        schema = field.value;
        const problem = schemaProblem(schema);
        if (problem !== null) r.error([...at, field.key], `the JSON Schema does not compile: ${problem}`);
      } else {
        r.error([...at, field.key], 'must be a JSON Schema (a mapping or a boolean)');
      }
    }
    return { ...t.base, type: 'json-schema', threshold, path: p, schema };
  },
  similar: (t, threshold) => {
    const { r, at, cfg } = t;
    const p = path(t);
    const value = operand(t, p);
    const ignoreCase = r.boolean([...at, 'config', 'ignoreCase'], cfg.ignoreCase, false);
    const normalizeWhitespace = r.boolean(
      [...at, 'config', 'normalizeWhitespace'],
      cfg.normalizeWhitespace,
      false,
    );
    return { ...t.base, type: 'similar', threshold, path: p, value, ignoreCase, normalizeWhitespace };
  },
  'file-equals': (t, threshold) => {
    const { r, at, m } = t;
    let outputFile = '';
    let expectedFile = '';
    if (m.value === undefined) r.error([...at, 'value'], 'is required: a file name, or { output, expected }');
    else if (typeof m.value === 'string') {
      outputFile = expectedFile = fileName(r, [...at, 'value'], m.value) ?? '';
    } else if (isMapping(m.value)) {
      r.onlyKeys([...at, 'value'], m.value, ['output', 'expected']);
      if (m.value.output === undefined) r.error([...at, 'value', 'output'], 'is required');
      else outputFile = fileName(r, [...at, 'value', 'output'], m.value.output) ?? '';
      expectedFile =
        m.value.expected === undefined
          ? outputFile
          : (fileName(r, [...at, 'value', 'expected'], m.value.expected) ?? '');
    } else {
      r.error([...at, 'value'], 'must be a file name or { output, expected }');
    }
    return { ...t.base, type: 'file-equals', threshold, outputFile, expectedFile };
  },
  'custom-script': (t, threshold) => {
    const { r, at, cfg } = t;
    const field = operandField(t, 'script', true);
    let script = '';
    if (field !== undefined) {
      const s = r.string([...at, field.key], field.value, {
        minLength: 1,
        maxLength: SCRIPT_LIMITS.maxChars,
      });
      if (s !== undefined) {
        script = s;
        const problem = scriptProblem(s);
        if (problem !== null) r.error([...at, field.key], `the script does not compile: ${problem}`);
      }
    }
    const L = SCRIPT_LIMITS;
    const timeoutMs =
      cfg.timeoutMs === undefined
        ? L.timeoutMs.def
        : r.number([...at, 'config', 'timeoutMs'], cfg.timeoutMs, {
            min: 1,
            max: L.timeoutMs.max,
            integer: true,
          });
    const memoryLimitMb =
      cfg.memoryLimitMb === undefined
        ? L.memoryMb.def
        : r.number([...at, 'config', 'memoryLimitMb'], cfg.memoryLimitMb, {
            min: L.memoryMb.min,
            max: L.memoryMb.max,
            integer: true,
          });
    return {
      ...t.base,
      type: 'custom-script',
      threshold,
      script,
      timeoutMs: timeoutMs ?? L.timeoutMs.def,
      memoryLimitMb: memoryLimitMb ?? L.memoryMb.def,
    };
  },
  'llm-judge': (t, threshold) => {
    const { r, at, cfg } = t;
    const p = path(t);
    const model =
      cfg.model === undefined
        ? null
        : (r.string([...at, 'config', 'model'], cfg.model, { minLength: 1, maxLength: 200 }) ?? null);
    const mode = r.oneOf(
      [...at, 'config', 'mode'],
      cfg.mode,
      ['continuous', 'discrete'] as const,
      'continuous',
    );
    const labels: Record<string, number> = {};
    if (cfg.labels !== undefined) {
      const lm = r.mapping([...at, 'config', 'labels'], cfg.labels);
      if (lm !== undefined) {
        if (Object.keys(lm).length === 0)
          r.error([...at, 'config', 'labels'], 'must name at least one label');
        for (const [label, v] of Object.entries(lm)) {
          const s = r.threshold([...at, 'config', 'labels', label], v);
          // defineProperty, so a label named "__proto__" is a label and not a prototype.
          if (s !== undefined)
            Object.defineProperty(labels, label, {
              value: s,
              enumerable: true,
              writable: true,
              configurable: true,
            });
        }
      }
    } else if (mode === 'discrete') {
      r.error([...at, 'config', 'labels'], 'is required in discrete mode (label: score)');
    }
    let promptExtension = '';
    if (cfg.promptExtension === undefined)
      r.error([...at, 'config', 'promptExtension'], 'is required: the criteria the judge applies');
    else
      promptExtension =
        r
          .string([...at, 'config', 'promptExtension'], cfg.promptExtension, {
            minLength: JUDGE_LIMITS.minPromptExtension,
            maxLength: 20_000,
          })
          ?.trim() ?? '';
    const includeInput = r.boolean([...at, 'config', 'includeInput'], cfg.includeInput, false);
    const J = JUDGE_LIMITS.timeoutMs;
    const timeoutMs =
      cfg.timeoutMs === undefined
        ? J.def
        : (r.number([...at, 'config', 'timeoutMs'], cfg.timeoutMs, { min: 1, max: J.max, integer: true }) ??
          J.def);
    return {
      ...t.base,
      type: 'llm-judge',
      threshold,
      path: p,
      model,
      mode,
      labels,
      promptExtension,
      includeInput,
      timeoutMs,
    };
  },
};
