// Finds the rule for one request descriptor (the upstream GetLimit): per level, greedily,
// explicit `key_value` > first matching wildcard (load order) > `key` alone; depth must equal
// the number of entries; no backtracking.

import type { DescriptorNode, DomainRules, Rule } from '../config/rules.js';
import type { DescriptorEntry } from '../types.js';

export interface RuleMatch {
  rule: Rule;
  /** The matched node of every level, for cache and metric keys. */
  path: DescriptorNode[];
}

export function matchRule(domain: DomainRules, entries: readonly DescriptorEntry[]): RuleMatch | undefined {
  const n = entries.length;
  if (n === 0) return undefined;
  let level = domain.root;
  const path: DescriptorNode[] = [];
  for (let i = 0; i < n; i++) {
    const entry = entries[i]!;
    let node: DescriptorNode | undefined;
    if (level.wildcards.length > 0 || level.compositePrefixes.has(entry.key)) {
      const composite = entry.key + '_' + entry.value;
      node = level.exact.get(composite);
      if (node === undefined) {
        for (const candidate of level.wildcards) {
          if (candidate.wildcard!(composite)) {
            node = candidate;
            break;
          }
        }
      }
    }
    if (node === undefined) node = level.exact.get(entry.key);
    if (node === undefined) return undefined;
    path.push(node);
    if (i === n - 1) return node.rule ? { rule: node.rule, path } : undefined;
    if (node.children === undefined) return undefined;
    level = node.children;
  }
  return undefined;
}

/** The statistic key of a matched rule (upstream FullKey with detailed_metric / value_to_metric). */
export function metricKeyOf(domain: string, match: RuleMatch, entries: readonly DescriptorEntry[]): string {
  const { rule, path } = match;
  if (!rule.dynamicMetric) return rule.fullKey;
  let key = domain;
  if (rule.detailedMetric) {
    for (let i = 0; i < path.length; i++) {
      const node = path[i]!;
      const e = entries[i]!;
      key += '.' + (node.shareThreshold ? node.finalKey : e.value === '' ? e.key : e.key + '_' + e.value);
    }
    return key;
  }
  for (let i = 0; i < path.length; i++) {
    const node = path[i]!;
    key +=
      '.' +
      (node.valueToMetric && !node.shareThreshold
        ? entries[i]!.key + '_' + entries[i]!.value
        : node.finalKey);
  }
  return key;
}
