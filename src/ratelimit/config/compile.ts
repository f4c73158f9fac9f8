// Validated documents → the immutable RuleSet. Checks run depth-first in the upstream order
// (empty key, duplicate, unit/unlimited, replaces, share_threshold) with its exact texts.

import { UNIT_NAMES, UNIT_SECONDS, Unit } from '../types.js';
import { ConfigError } from './errors.js';
import type { YamlDescriptor, YamlDomainConfig } from './parse.js';
import type { DescriptorNode, DomainRules, Level, Rule, RuleSet } from './rules.js';
import { compileWildcard } from './wildcard.js';

export interface CompileOptions {
  mergeDomainConfig: boolean;
  nearLimitRatio: number;
  nowMs?: number;
}

interface MutableLevel {
  exact: Map<string, DescriptorNode>;
  wildcards: DescriptorNode[];
}

/** Hands out rule and node ids in load order. */
interface Counters {
  rules: number;
  nodes: number;
}

/** Config unit names accepted, upper-cased, like the upstream enum lookup (UNKNOWN excluded). */
export function parseUnit(text: string): Unit | undefined {
  const upper = text.toUpperCase();
  if (upper === 'UNKNOWN' || !Object.prototype.hasOwnProperty.call(Unit, upper)) return undefined;
  return Unit[upper as keyof typeof Unit];
}

export function nearThreshold(requestsPerUnit: number, ratio: number): number {
  return Math.floor(Math.fround(Math.fround(requestsPerUnit) * Math.fround(ratio)));
}

export function compileRuleSet(documents: readonly YamlDomainConfig[], options: CompileOptions): RuleSet {
  const roots = new Map<string, MutableLevel>();
  const lines: string[] = [];
  const ids: Counters = { rules: 0, nodes: 0 };
  for (const doc of documents) {
    let root = roots.get(doc.domain);
    if (root) {
      if (!options.mergeDomainConfig)
        throw new ConfigError(doc.file, `duplicate domain '${doc.domain}' in config file`);
    } else {
      root = { exact: new Map(), wildcards: [] };
      roots.set(doc.domain, root);
    }
    loadLevel(doc, root, `${doc.domain}.`, doc.descriptors, false, false, options, lines, ids);
  }
  const domains = new Map<string, DomainRules>();
  for (const [domain, root] of roots) domains.set(domain, Object.freeze({ domain, root: freezeLevel(root) }));
  return Object.freeze({
    domains,
    files: Object.freeze(documents.map((d) => d.file)),
    loadedAtMs: options.nowMs ?? Date.now(),
    dump: lines.map((l) => l + '\n').join(''),
    ruleCount: ids.rules,
    nodeCount: ids.nodes,
  });
}

function freezeLevel(level: MutableLevel): Level {
  const compositePrefixes = new Set<string>();
  for (const finalKey of level.exact.keys()) {
    for (let at = finalKey.indexOf('_'); at >= 0; at = finalKey.indexOf('_', at + 1))
      compositePrefixes.add(finalKey.slice(0, at));
  }
  return Object.freeze({ exact: level.exact, wildcards: Object.freeze(level.wildcards), compositePrefixes });
}

function loadLevel(
  doc: YamlDomainConfig,
  level: MutableLevel,
  parentKey: string,
  descriptors: readonly YamlDescriptor[],
  inheritedDetailed: boolean,
  inheritedDynamic: boolean,
  options: CompileOptions,
  dump: string[],
  ids: Counters,
): void {
  for (const d of descriptors) {
    if (d.key === '') throw new ConfigError(doc.file, 'descriptor has empty key', parentKey.slice(0, -1));
    const finalKey = d.value === '' ? d.key : `${d.key}_${d.value}`;
    const path = parentKey + finalKey;
    if (level.exact.has(finalKey))
      throw new ConfigError(doc.file, `duplicate descriptor composite key '${path}'`, path);

    const detailed = inheritedDetailed || d.detailedMetric;
    const dynamic = inheritedDynamic || d.valueToMetric || detailed;
    let rule: Rule | undefined;
    if (d.rateLimit) {
      const rl = d.rateLimit;
      const unit = parseUnit(rl.unit);
      if (rl.unlimited) {
        if (unit !== undefined)
          throw new ConfigError(doc.file, 'should not specify rate limit unit when unlimited', path);
      } else if (unit === undefined) {
        throw new ConfigError(doc.file, `invalid rate limit unit '${rl.unit}'`, path);
      }
      for (const replaced of rl.replaces) {
        if (replaced === '') throw new ConfigError(doc.file, 'should not have an empty replaces entry', path);
        if (replaced === rl.name)
          throw new ConfigError(doc.file, 'replaces should not contain name of same descriptor', path);
      }
      const effectiveUnit = rl.unlimited ? Unit.UNKNOWN : unit!;
      const requestsPerUnit = rl.unlimited ? 0 : rl.requestsPerUnit;
      rule = Object.freeze({
        id: ids.rules++,
        requestsPerUnit,
        unit: effectiveUnit,
        divider: UNIT_SECONDS[effectiveUnit] ?? 0,
        unlimited: rl.unlimited,
        shadowMode: d.shadowMode,
        quotaMode: d.quotaMode,
        name: rl.name,
        replaces: Object.freeze([...rl.replaces]),
        fullKey: path,
        detailedMetric: detailed,
        dynamicMetric: dynamic,
        nearThreshold: nearThreshold(requestsPerUnit, options.nearLimitRatio),
        currentLimit: Object.freeze({ requestsPerUnit, unit: effectiveUnit, name: rl.name }),
      });
      dump.push(
        `${path}: unit=${UNIT_NAMES[effectiveUnit]} requests_per_unit=${rule.requestsPerUnit}, shadow_mode: ${d.shadowMode}, quota_mode: ${d.quotaMode}`,
      );
    }
    if (d.shareThreshold && !d.value.includes('*')) {
      throw new ConfigError(
        doc.file,
        `share_threshold can only be used with wildcard values (containing '*'), but found key '${finalKey}'`,
        path,
      );
    }
    let children: Level | undefined;
    if (d.descriptors.length > 0) {
      const child: MutableLevel = { exact: new Map(), wildcards: [] };
      loadLevel(doc, child, path + '.', d.descriptors, detailed, dynamic, options, dump, ids);
      children = freezeLevel(child);
    }
    const node: DescriptorNode = Object.freeze({
      id: ids.nodes++,
      key: d.key,
      value: d.value,
      finalKey,
      rule,
      children,
      valueToMetric: d.valueToMetric,
      shareThreshold: d.shareThreshold,
      wildcard: d.value.includes('*') ? compileWildcard(finalKey) : undefined,
    });
    level.exact.set(finalKey, node);
    if (node.wildcard) level.wildcards.push(node);
  }
}
