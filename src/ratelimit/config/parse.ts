// YAML text → typed configuration document, with the upstream service's checks and error
// texts: parse, key whitelist (recursive), then typed decoding. YAML 1.1 rules, because the
// upstream parser is YAML 1.1 (`yes` is a boolean, `0x10` an int).

import { LineCounter, isAlias, isMap, isScalar, isSeq, parseDocument, type Document, type Node } from 'yaml';
import { ConfigError } from './errors.js';

export interface YamlRateLimit {
  unit: string;
  requestsPerUnit: number;
  unlimited: boolean;
  name: string;
  replaces: string[];
}

export interface YamlDescriptor {
  key: string;
  value: string;
  rateLimit: YamlRateLimit | undefined;
  descriptors: YamlDescriptor[];
  shadowMode: boolean;
  quotaMode: boolean;
  detailedMetric: boolean;
  valueToMetric: boolean;
  shareThreshold: boolean;
  /** Line of the descriptor in its file (1-based), for messages. */
  line: number;
}

export interface YamlDomainConfig {
  file: string;
  domain: string;
  descriptors: YamlDescriptor[];
}

const VALID_KEYS = new Set([
  'domain',
  'key',
  'value',
  'descriptors',
  'rate_limit',
  'unit',
  'requests_per_unit',
  'unlimited',
  'shadow_mode',
  'quota_mode',
  'name',
  'replaces',
  'detailed_metric',
  'value_to_metric',
  'share_threshold',
  'metadata',
]);

type Plain = string | number | boolean | null | Plain[] | PlainMap;
interface PlainMap {
  entries: { key: Plain; keyText: string; value: Plain; node: Node | null }[];
}

export function parseConfigFile(file: string, text: string): YamlDomainConfig {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { version: '1.1', lineCounter, uniqueKeys: false });
  if (doc.errors.length > 0) {
    throw new ConfigError(file, `error loading config file: ${doc.errors[0]!.message.split('\n')[0]}`);
  }
  const root = doc.contents;
  if (root === null || (isScalar(root) && root.value === null)) {
    // An empty file decodes to an empty document upstream, which then has no domain.
    throw new ConfigError(file, 'config file cannot have empty domain');
  }
  if (!isMap(root)) {
    throw new ConfigError(
      file,
      `error loading config file: yaml: unmarshal errors:\n  line ${lineOf(root, lineCounter)}: cannot unmarshal ${tagOf(root)} into map[interface {}]interface {}`,
    );
  }
  validateKeys(file, root, doc);
  const decoder = new Decoder(file, doc, lineCounter);
  const parsed = decoder.root(root);
  if (decoder.errors.length > 0) {
    throw new ConfigError(
      file,
      `error loading config file: yaml: unmarshal errors:\n  ${decoder.errors.join('\n  ')}`,
    );
  }
  if (parsed.domain === '') throw new ConfigError(file, 'config file cannot have empty domain');
  return parsed;
}

function resolve(node: unknown, doc: Document): unknown {
  return isAlias(node) ? node.resolve(doc) : node;
}

/** Key whitelist and leaf types, like the upstream's validateYamlKeys. */
function validateKeys(file: string, map: Node, doc: Document): void {
  if (!isMap(map)) return;
  for (const pair of map.items) {
    const keyNode = resolve(pair.key, doc);
    const keyValue = isScalar(keyNode) ? keyNode.value : keyNode;
    if (typeof keyValue !== 'string') {
      throw new ConfigError(file, `config error, key is not of type string: ${goFormat(keyNode, doc)}`);
    }
    if (!VALID_KEYS.has(keyValue)) throw new ConfigError(file, `config error, unknown key '${keyValue}'`);
    // metadata is free-form by design; the upstream does not look inside it either.
    if (keyValue === 'metadata') continue;
    const value = resolve(pair.value, doc);
    if (value === null || value === undefined) continue;
    if (isSeq(value)) {
      for (const item of value.items) {
        const element = resolve(item, doc);
        if (!isMap(element)) {
          throw new ConfigError(
            file,
            `config error, yaml file contains list of type other than map: ${goFormat(element, doc)}`,
          );
        }
        validateKeys(file, element, doc);
      }
    } else if (isMap(value)) {
      validateKeys(file, value, doc);
    } else if (isScalar(value)) {
      const v = value.value;
      const leafOk =
        v === null ||
        typeof v === 'string' ||
        typeof v === 'boolean' ||
        (typeof v === 'number' && Number.isInteger(v) && !/[.eE]/.test(value.source ?? ''));
      if (!leafOk) throw new ConfigError(file, 'error checking config');
    } else {
      throw new ConfigError(file, 'error checking config');
    }
  }
}

/** Renders a value the way Go's `%v` prints a decoded YAML value. */
function goFormat(node: unknown, doc: Document): string {
  const n = resolve(node, doc);
  if (n === null || n === undefined) return '<nil>';
  if (isScalar(n)) {
    if (n.value === null) return '<nil>';
    return typeof n.value === 'string' ? n.value : (n.source ?? scalarText(n.value));
  }
  if (isSeq(n)) return `[${n.items.map((i) => goFormat(i, doc)).join(' ')}]`;
  if (isMap(n))
    return `map[${n.items.map((p) => `${goFormat(p.key, doc)}:${goFormat(p.value, doc)}`).join(' ')}]`;
  return '<unknown>';
}

function scalarText(value: unknown): string {
  return typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint'
    ? String(value)
    : (JSON.stringify(value) ?? '');
}

function tagOf(node: unknown): string {
  if (isSeq(node)) return '!!seq';
  if (isMap(node)) return '!!map';
  if (isScalar(node)) {
    const v = node.value;
    if (typeof v === 'string') return `!!str \`${v}\``;
    if (typeof v === 'boolean') return `!!bool \`${node.source ?? String(v)}\``;
    if (typeof v === 'number')
      return `${Number.isInteger(v) && !/[.eE]/.test(node.source ?? '') ? '!!int' : '!!float'} \`${node.source ?? String(v)}\``;
    if (v === null) return '!!null';
  }
  return '!!unknown';
}

function lineOf(node: unknown, lines: LineCounter): number {
  const range = (node as { range?: [number, number, number] } | null)?.range;
  return range ? lines.linePos(range[0]).line : 0;
}

/** Typed decoding with the upstream decoder's leniency: scalars decode into string fields by their text. */
class Decoder {
  readonly errors: string[] = [];

  constructor(
    private readonly file: string,
    private readonly doc: Document,
    private readonly lines: LineCounter,
  ) {}

  root(map: Node): YamlDomainConfig {
    const fields = this.fields(map);
    return {
      file: this.file,
      domain: this.string(fields.get('domain')),
      descriptors: this.descriptorList(fields.get('descriptors')),
    };
  }

  private fields(node: Node): Map<string, unknown> {
    const out = new Map<string, unknown>();
    if (!isMap(node)) return out;
    for (const pair of node.items) {
      const key = resolve(pair.key, this.doc);
      if (isScalar(key) && typeof key.value === 'string') out.set(key.value, resolve(pair.value, this.doc));
    }
    return out;
  }

  private mismatch(node: unknown, target: string): void {
    this.errors.push(`line ${lineOf(node, this.lines)}: cannot unmarshal ${tagOf(node)} into ${target}`);
  }

  private string(node: unknown): string {
    if (node === undefined || node === null) return '';
    if (isScalar(node)) {
      if (node.value === null) return '';
      if (typeof node.value === 'string') return node.value;
      return node.source ?? scalarText(node.value);
    }
    this.mismatch(node, 'string');
    return '';
  }

  private bool(node: unknown): boolean {
    if (node === undefined || node === null) return false;
    if (isScalar(node)) {
      if (node.value === null) return false;
      if (typeof node.value === 'boolean') return node.value;
    }
    this.mismatch(node, 'bool');
    return false;
  }

  private uint32(node: unknown): number {
    if (node === undefined || node === null) return 0;
    if (isScalar(node)) {
      const v = node.value;
      if (v === null) return 0;
      if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffffffff) return v;
    }
    this.mismatch(node, 'uint32');
    return 0;
  }

  private descriptorList(node: unknown): YamlDescriptor[] {
    if (node === undefined || node === null || (isScalar(node) && node.value === null)) return [];
    if (!isSeq(node)) {
      this.mismatch(node, '[]config.YamlDescriptor');
      return [];
    }
    const out: YamlDescriptor[] = [];
    for (const item of node.items) {
      const element = resolve(item, this.doc);
      if (!isMap(element)) continue; // already refused by the whitelist pass
      out.push(this.descriptor(element));
    }
    return out;
  }

  private descriptor(node: Node): YamlDescriptor {
    const f = this.fields(node);
    const rl = f.get('rate_limit');
    return {
      key: this.string(f.get('key')),
      value: this.string(f.get('value')),
      rateLimit:
        rl === undefined || rl === null || (isScalar(rl) && rl.value === null)
          ? undefined
          : this.rateLimit(rl),
      descriptors: this.descriptorList(f.get('descriptors')),
      shadowMode: this.bool(f.get('shadow_mode')),
      quotaMode: this.bool(f.get('quota_mode')),
      detailedMetric: this.bool(f.get('detailed_metric')),
      valueToMetric: this.bool(f.get('value_to_metric')),
      shareThreshold: this.bool(f.get('share_threshold')),
      line: lineOf(node, this.lines),
    };
  }

  private rateLimit(node: unknown): YamlRateLimit {
    if (!isMap(node)) {
      this.mismatch(node, 'config.YamlRateLimit');
      return { unit: '', requestsPerUnit: 0, unlimited: false, name: '', replaces: [] };
    }
    const f = this.fields(node);
    const replaces: string[] = [];
    const list = f.get('replaces');
    if (isSeq(list)) {
      for (const item of list.items) {
        const element = resolve(item, this.doc);
        if (isMap(element)) replaces.push(this.string(this.fields(element).get('name')));
      }
    } else if (list !== undefined && list !== null && !(isScalar(list) && list.value === null)) {
      this.mismatch(list, '[]config.yamlReplaces');
    }
    return {
      unit: this.string(f.get('unit')),
      requestsPerUnit: this.uint32(f.get('requests_per_unit')),
      unlimited: this.bool(f.get('unlimited')),
      name: this.string(f.get('name')),
      replaces,
    };
  }
}
