// The compiled, immutable rule set: one prefix tree per domain. Each level maps the composite
// `key_value` (or `key`) to a node and keeps the wildcard nodes of the level in load order.

import type { CurrentLimit, Unit } from '../types.js';
import type { WildcardMatcher } from './wildcard.js';

export interface Rule {
  /** Index of the rule in its rule set (0 … ruleCount − 1); -1 for a request's limit override. */
  readonly id: number;
  readonly requestsPerUnit: number;
  readonly unit: Unit;
  /** Window length in seconds (0 for unlimited). */
  readonly divider: number;
  readonly unlimited: boolean;
  readonly shadowMode: boolean;
  readonly quotaMode: boolean;
  /** rate_limit.name; '' when none. */
  readonly name: string;
  readonly replaces: readonly string[];
  /** Metric key when no runtime value takes part: domain + '.' + path of composite keys. */
  readonly fullKey: string;
  /** The rule's node has detailed_metric itself or from an ancestor. */
  readonly detailedMetric: boolean;
  /** Some node on the path makes the metric key depend on runtime values. */
  readonly dynamicMetric: boolean;
  /** Near-limit threshold, computed once in float32 like the upstream. */
  readonly nearThreshold: number;
  /** The status's `currentLimit`, built once: every status of this rule shares it (frozen). */
  readonly currentLimit: Readonly<CurrentLimit>;
}

export interface DescriptorNode {
  /** Index of the node in its rule set (0 … nodeCount − 1), for per-node tables built from it. */
  readonly id: number;
  readonly key: string;
  readonly value: string;
  /** `key` or `key_value`, as configured (wildcards kept). */
  readonly finalKey: string;
  readonly rule: Rule | undefined;
  readonly children: Level | undefined;
  readonly valueToMetric: boolean;
  readonly shareThreshold: boolean;
  readonly wildcard: WildcardMatcher | undefined;
}

export interface Level {
  readonly exact: ReadonlyMap<string, DescriptorNode>;
  readonly wildcards: readonly DescriptorNode[];
  /**
   * Every text before an `_` in this level's composite keys. A request key not in it cannot
   * match any `key_value` entry exactly, so matching skips building that string.
   */
  readonly compositePrefixes: ReadonlySet<string>;
}

export interface DomainRules {
  readonly domain: string;
  readonly root: Level;
}

export interface RuleSet {
  readonly domains: ReadonlyMap<string, DomainRules>;
  /** Files (entry names) that made up this set, in load order. */
  readonly files: readonly string[];
  readonly loadedAtMs: number;
  /** One line per rule, the /rlconfig format. */
  readonly dump: string;
  /** Rules and descriptor nodes in the set: the bounds of their `id`s. */
  readonly ruleCount: number;
  readonly nodeCount: number;
}
