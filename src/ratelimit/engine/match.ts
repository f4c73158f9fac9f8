// Finds the rule for one request descriptor (the upstream GetLimit): per level, greedily,
// explicit `key_value` > first matching wildcard (load order) > `key` alone; depth must equal
// the number of entries; no backtracking.

import type { DescriptorNode, DomainRules, Rule } from '../config/rules.js';
import type { DescriptorEntry } from '../types.js';

/**
 * The rule for `entries`, or undefined. The matched node of every level is written to
 * `path[0 … entries.length − 1]` (for cache and metric keys): the caller passes a buffer it
 * reuses, so a decision allocates no path.
 */
export function matchRule(
  domain: DomainRules,
  entries: readonly DescriptorEntry[],
  path: DescriptorNode[],
): Rule | undefined {
  const n = entries.length;
  if (n === 0) return undefined;
  let level = domain.root;
  for (let i = 0; i < n; i++) {
    const entry = entries[i]!;
    let node: DescriptorNode | undefined;
    if (level.wildcards.length > 0 || level.compositePrefixes.has(entry.key)) {
      const composite = entry.key + '_' + entry.value;
      node = level.exact.get(composite);
      if (node === undefined) {
        const wildcards = level.wildcards;
        for (let w = 0; w < wildcards.length; w++) {
          if (wildcards[w]!.wildcard!(composite)) {
            node = wildcards[w];
            break;
          }
        }
      }
    }
    if (node === undefined) node = level.exact.get(entry.key);
    if (node === undefined) return undefined;
    path[i] = node;
    if (i === n - 1) return node.rule;
    if (node.children === undefined) return undefined;
    level = node.children;
  }
  return undefined;
}

/** The statistic key of a matched rule (upstream FullKey with detailed_metric / value_to_metric). */
export function metricKeyOf(
  domain: string,
  rule: Rule,
  path: readonly DescriptorNode[],
  entries: readonly DescriptorEntry[],
): string {
  if (!rule.dynamicMetric) return rule.fullKey;
  const n = entries.length;
  let key = domain;
  if (rule.detailedMetric) {
    for (let i = 0; i < n; i++) {
      const node = path[i]!;
      const e = entries[i]!;
      key += '.' + (node.shareThreshold ? node.finalKey : e.value === '' ? e.key : e.key + '_' + e.value);
    }
    return key;
  }
  for (let i = 0; i < n; i++) {
    const node = path[i]!;
    key +=
      '.' +
      (node.valueToMetric && !node.shareThreshold
        ? entries[i]!.key + '_' + entries[i]!.value
        : node.finalKey);
  }
  return key;
}
