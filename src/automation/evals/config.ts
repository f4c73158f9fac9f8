// Evaluator configuration: YAML text → a validated EvaluatorConfig, or every problem found
// with its field path (and line) for a 400 body. The YAML 1.2 core schema is used, so no tag
// can construct code or custom objects; alias expansion is bounded against "billion laughs".
import { LineCounter, parseDocument } from 'yaml';
import { ConfigReader, type FieldPath, isMapping, type Mapping } from './config-reader.js';
import {
  CONFIG_FIELDS,
  DEFAULT_THRESHOLDS,
  TYPE_FIELDS,
  TYPE_READERS,
  type BaseFields,
} from './config-types.js';
import {
  CUSTOM_SCRIPTS_DISABLED,
  EVALUATOR_TYPES,
  type EvaluatorSpec,
  type EvaluatorType,
  type ParseResult,
} from './types.js';

export const MAX_CONFIG_BYTES = 1024 * 1024;
export const MAX_EVALUATORS = 100;
export const DEFAULT_PASS_THRESHOLD = 0.7;
const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const TYPE_ALIASES: Readonly<Record<string, EvaluatorType>> = { javascript: 'custom-script' };
const COMMON_FIELDS = ['name', 'type', 'weight', 'threshold', 'description'];

export interface ParseOptions {
  /** false: a custom-script (javascript) evaluator is refused (AUTOMATION_CUSTOM_SCRIPTS). */
  readonly customScripts?: boolean;
}

function readEvaluator(
  r: ConfigReader,
  at: FieldPath,
  raw: unknown,
  names: Set<string>,
  opts: ParseOptions,
): EvaluatorSpec | undefined {
  const m = r.mapping(at, raw);
  if (m === undefined) return undefined;

  let name: string | undefined;
  if (m.name === undefined) r.error([...at, 'name'], 'is required');
  else {
    name = r.string([...at, 'name'], m.name, { minLength: 1, maxLength: 64 });
    if (name !== undefined && !NAME.test(name)) {
      r.error(
        [...at, 'name'],
        `must be kebab-case (lower-case letters, digits and single dashes), got ${JSON.stringify(name)}`,
      );
    } else if (name !== undefined && names.has(name)) {
      r.error([...at, 'name'], `duplicate evaluator name "${name}"`);
    }
    if (name !== undefined) names.add(name);
  }

  let type: EvaluatorType | undefined;
  if (m.type === undefined) r.error([...at, 'type'], `is required (one of ${EVALUATOR_TYPES.join(', ')})`);
  else if (typeof m.type !== 'string') r.error([...at, 'type'], 'must be a string');
  else {
    type =
      (Object.hasOwn(TYPE_ALIASES, m.type) ? TYPE_ALIASES[m.type] : undefined) ??
      (EVALUATOR_TYPES as readonly string[]).find((t): t is EvaluatorType => t === m.type);
    if (type === undefined)
      r.error(
        [...at, 'type'],
        `unknown evaluator type "${m.type}" (known: ${EVALUATOR_TYPES.join(', ')}, javascript)`,
      );
    else if (type === 'custom-script' && opts.customScripts === false)
      r.error([...at, 'type'], CUSTOM_SCRIPTS_DISABLED);
  }

  const weight =
    m.weight === undefined
      ? 1
      : r.number([...at, 'weight'], m.weight, { min: 0, what: 'is a weight and must be' });
  let threshold = m.threshold === undefined ? undefined : r.threshold([...at, 'threshold'], m.threshold);
  const description =
    m.description === undefined
      ? undefined
      : r.string([...at, 'description'], m.description, { maxLength: 2000 });

  // Without a known type the remaining fields cannot be judged; one error is enough.
  if (type === undefined) return undefined;
  r.onlyKeys(at, m, [...COMMON_FIELDS, ...TYPE_FIELDS[type]]);

  let cfg: Mapping = {};
  if (m.config !== undefined && TYPE_FIELDS[type].includes('config')) {
    cfg = r.mapping([...at, 'config'], m.config) ?? {};
    r.onlyKeys([...at, 'config'], cfg, [...CONFIG_FIELDS[type], 'passThreshold']);
    if (cfg.passThreshold !== undefined) {
      if (m.threshold !== undefined)
        r.error(
          [...at, 'config', 'passThreshold'],
          'give either "threshold" or "config.passThreshold", not both',
        );
      else threshold = r.threshold([...at, 'config', 'passThreshold'], cfg.passThreshold);
    }
  }

  const base: BaseFields = {
    name: name ?? '',
    weight: weight ?? 1,
    threshold,
    ...(description === undefined ? {} : { description }),
  };
  return TYPE_READERS[type]({ r, at, m, cfg, base }, threshold ?? DEFAULT_THRESHOLDS[type]);
}

function readConfig(r: ConfigReader, root: unknown, opts: ParseOptions): ParseResult {
  if (root === null || root === undefined) {
    r.error([], 'the document is empty; expected a mapping with "evaluators"');
    return { ok: false, errors: r.issues };
  }
  if (!isMapping(root)) {
    r.error([], 'the document must be a mapping with "evaluators"');
    return { ok: false, errors: r.issues };
  }
  r.onlyKeys([], root, ['passThreshold', 'evaluators']);
  const passThreshold =
    root.passThreshold === undefined
      ? DEFAULT_PASS_THRESHOLD
      : (r.threshold(['passThreshold'], root.passThreshold) ?? DEFAULT_PASS_THRESHOLD);
  const evaluators: EvaluatorSpec[] = [];
  if (root.evaluators === undefined) r.error(['evaluators'], 'is required (a list; [] for none)');
  else if (!Array.isArray(root.evaluators)) r.error(['evaluators'], 'must be a list');
  else if (root.evaluators.length > MAX_EVALUATORS)
    r.error(
      ['evaluators'],
      `at most ${MAX_EVALUATORS} evaluators are accepted, got ${root.evaluators.length}`,
    );
  else {
    const names = new Set<string>();
    root.evaluators.forEach((raw: unknown, i) => {
      const spec = readEvaluator(r, ['evaluators', i], raw, names, opts);
      if (spec !== undefined) evaluators.push(spec);
    });
  }
  if (r.issues.length > 0) return { ok: false, errors: r.issues };
  return { ok: true, config: { passThreshold, evaluators } };
}

export function parseEvaluatorConfig(yamlText: string, opts: ParseOptions = {}): ParseResult {
  if (typeof yamlText !== 'string') {
    return {
      ok: false,
      errors: [{ path: '<root>', message: 'the evaluator configuration must be YAML text' }],
    };
  }
  const bytes = Buffer.byteLength(yamlText, 'utf8');
  if (bytes > MAX_CONFIG_BYTES) {
    return {
      ok: false,
      errors: [
        { path: '<root>', message: `the YAML is ${bytes} bytes; at most ${MAX_CONFIG_BYTES} are accepted` },
      ],
    };
  }
  const lines = new LineCounter();
  const doc = parseDocument(yamlText, {
    schema: 'core',
    uniqueKeys: true,
    prettyErrors: false,
    lineCounter: lines,
  });
  // Unresolved tags (e.g. !!js/function) are only warnings to the yaml package; here they are errors.
  const problems = [...doc.errors, ...doc.warnings];
  if (problems.length > 0) {
    return {
      ok: false,
      errors: problems.map((e) => {
        const { line, col } = lines.linePos(e.pos[0]);
        return {
          path: '<root>',
          message: `YAML ${e.code === 'TAG_RESOLVE_FAILED' ? 'tag' : 'syntax'} error at line ${line}, column ${col}: ${e.message}`,
          line,
        };
      }),
    };
  }
  let root: unknown;
  try {
    root = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    return {
      ok: false,
      errors: [
        {
          path: '<root>',
          message: `the YAML cannot be expanded: ${err instanceof Error ? err.message : String(err)}`,
        },
      ],
    };
  }
  return readConfig(new ConfigReader(doc, lines), root, opts);
}
