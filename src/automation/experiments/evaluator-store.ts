// A tenant's evaluator configuration of an automation (named database `evaluator-configs`, key
// [tenant, automationId]): the YAML text as given (so GET returns exactly what was PUT) and its
// parsed form, validated with the evaluators library before it is stored. The configuration
// holds the tenant's own patterns, scripts and judge prompts, so each tenant has its own.

import type { Database } from 'lmdb';
import type { AutomationDb } from '../db.js';
import { ApiError, type Issue } from '../errors.js';
import { parseEvaluatorConfig, type EvaluatorConfig, type ParseOptions } from '../evals/index.js';

export interface StoredEvaluatorConfig {
  tenant: string;
  automationId: string;
  yaml: string;
  updatedAt: string;
}

/** `evaluators[2].value` → `evaluators.2.value`, the envelope's dotted field form. */
export function dottedPath(path: string): string {
  if (path === '<root>' || path === '') return '<root>';
  return path.replace(/\[(\d+)\]/g, '.$1').replace(/^\./, '');
}

export function configIssues(
  yamlText: string,
  opts: ParseOptions = {},
): { config?: EvaluatorConfig; issues: Issue[] } {
  const parsed = parseEvaluatorConfig(yamlText, opts);
  if (parsed.ok) return { config: parsed.config, issues: [] };
  return {
    issues: parsed.errors.map((e) => ({
      field: dottedPath(e.path),
      message: e.line === undefined ? e.message : `${e.message} (line ${e.line})`,
      code: 'invalid_value',
      severity: 'error' as const,
    })),
  };
}

export class EvaluatorStore {
  private readonly table: Database<StoredEvaluatorConfig, [string, string]>;
  /** Parsed configs by JSON of [tenant, automationId]. */
  private readonly cache = new Map<string, { yaml: string; config: EvaluatorConfig }>();

  /** `customScripts: false` refuses new configs with scripts; stored ones still load, and
   *  their script evaluators are refused when scoring (ScriptPool). */
  constructor(
    db: AutomationDb,
    private readonly opts: ParseOptions = {},
  ) {
    this.table = db.root.openDB<StoredEvaluatorConfig, [string, string]>({ name: 'evaluator-configs' });
  }

  get(tenant: string, automationId: string): StoredEvaluatorConfig | undefined {
    return this.table.get([tenant, automationId]);
  }

  /** The parsed config, or undefined when the tenant has none for the automation. */
  config(tenant: string, automationId: string): EvaluatorConfig | undefined {
    const stored = this.get(tenant, automationId);
    if (!stored) return undefined;
    const cacheKey = JSON.stringify([tenant, automationId]);
    const hit = this.cache.get(cacheKey);
    if (hit && hit.yaml === stored.yaml) return hit.config;
    const { config } = configIssues(stored.yaml);
    if (config) this.cache.set(cacheKey, { yaml: stored.yaml, config });
    return config;
  }

  async put(
    tenant: string,
    automationId: string,
    yamlText: string,
  ): Promise<{ stored: StoredEvaluatorConfig; config: EvaluatorConfig }> {
    const { config, issues } = configIssues(yamlText, this.opts);
    if (!config)
      throw new ApiError(
        400,
        'invalid_evaluators',
        `invalid evaluator configuration: ${issues[0]?.field}: ${issues[0]?.message}`,
        issues,
      );
    const stored = { tenant, automationId, yaml: yamlText, updatedAt: new Date().toISOString() };
    await this.table.put([tenant, automationId], stored);
    this.cache.set(JSON.stringify([tenant, automationId]), { yaml: yamlText, config });
    return { stored, config };
  }
}
