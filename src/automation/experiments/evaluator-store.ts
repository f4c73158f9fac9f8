// An automation's evaluator configuration: the YAML text as given (so GET returns exactly what
// was PUT) and its parsed form, validated with the evaluators library before it is stored.

import type { Database } from 'lmdb';
import type { AutomationDb } from '../db.js';
import { ServiceError, type Issue } from '../errors.js';
import { parseEvaluatorConfig, type EvaluatorConfig, type ParseOptions } from '../evals/index.js';

export interface StoredEvaluatorConfig {
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
  private readonly table: Database<StoredEvaluatorConfig, string>;
  private readonly cache = new Map<string, { yaml: string; config: EvaluatorConfig }>();

  /** `customScripts: false` refuses new configs with scripts; stored ones still load, and
   *  their script evaluators are refused when scoring (ScriptPool). */
  constructor(
    db: AutomationDb,
    private readonly opts: ParseOptions = {},
  ) {
    this.table = db.root.openDB<StoredEvaluatorConfig, string>({ name: 'evaluator-configs' });
  }

  get(automationId: string): StoredEvaluatorConfig | undefined {
    return this.table.get(automationId);
  }

  /** The parsed config, or undefined when the automation has none. */
  config(automationId: string): EvaluatorConfig | undefined {
    const stored = this.get(automationId);
    if (!stored) return undefined;
    const hit = this.cache.get(automationId);
    if (hit && hit.yaml === stored.yaml) return hit.config;
    const { config } = configIssues(stored.yaml);
    if (config) this.cache.set(automationId, { yaml: stored.yaml, config });
    return config;
  }

  async put(
    automationId: string,
    yamlText: string,
  ): Promise<{ stored: StoredEvaluatorConfig; config: EvaluatorConfig }> {
    const { config, issues } = configIssues(yamlText, this.opts);
    if (!config)
      throw new ServiceError(
        400,
        'invalid_evaluators',
        `invalid evaluator configuration: ${issues[0]?.field}: ${issues[0]?.message}`,
        issues,
      );
    const stored = { automationId, yaml: yamlText, updatedAt: new Date().toISOString() };
    await this.table.put(automationId, stored);
    this.cache.set(automationId, { yaml: yamlText, config });
    return { stored, config };
  }
}
