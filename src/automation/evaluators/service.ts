// A tenant's evaluator configuration of an automation: validated with the evaluators library
// before it is stored, parsed once per stored text (cached), and shown as the API's
// EvaluatorConfigResponse. The configuration holds the tenant's own patterns, scripts and judge
// prompts, so each tenant has its own; a run is scored with its own tenant's configuration.

import { ApiError, type Issue } from '../errors.js';
import {
  DEFAULT_PASS_THRESHOLD,
  parseEvaluatorConfig,
  type EvaluatorConfig,
  type ParseOptions,
} from '../evals/index.js';
import type { AutomationRecord } from '../registry/service.js';
import type { EvaluatorConfigResponse } from '../wire/experiments.js';
import type { EvaluatorConfigStore, StoredEvaluatorConfig } from './store.js';

/** `evaluators[2].value` → `evaluators.2.value`, the envelope's dotted field form. */
export function dottedPath(path: string): string {
  if (path === '<root>' || path === '') return '<root>';
  return path.replace(/\[(\d+)\]/g, '.$1').replace(/^\./, '');
}

/** Every problem of a YAML text as envelope issues (message ends with the YAML line when known). */
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

export class EvaluatorConfigs {
  /** Parsed configs by JSON of [tenant, automationId], valid while the stored text is the same. */
  private readonly cache = new Map<string, { yaml: string; config: EvaluatorConfig }>();

  /**
   * `customScripts: false` refuses new configs with scripts; stored ones still load, and their
   * script evaluators are refused when scoring (ScriptPool).
   */
  constructor(
    private readonly store: EvaluatorConfigStore,
    private readonly opts: ParseOptions = {},
  ) {}

  /** The parsed config, or undefined when the tenant has none for the automation. */
  async config(tenant: string, automationId: string): Promise<EvaluatorConfig | undefined> {
    return this.parsed(tenant, automationId, await this.store.get(tenant, automationId));
  }

  private parsed(
    tenant: string,
    automationId: string,
    stored: StoredEvaluatorConfig | undefined,
  ): EvaluatorConfig | undefined {
    if (!stored) return undefined;
    const key = JSON.stringify([tenant, automationId]);
    const hit = this.cache.get(key);
    if (hit && hit.yaml === stored.yaml) return hit.config;
    const { config } = configIssues(stored.yaml);
    if (config) this.cache.set(key, { yaml: stored.yaml, config });
    return config;
  }

  /** As stored; `yaml: ""` and no evaluators when nothing is (the API's yaml is a string). */
  async view(tenant: string, automation: AutomationRecord): Promise<EvaluatorConfigResponse> {
    const stored = await this.store.get(tenant, automation.id);
    return configView(automation, stored?.yaml ?? '', this.parsed(tenant, automation.id, stored));
  }

  /** Validates and stores; a text that does not validate is a 400 listing every problem. */
  async replace(
    tenant: string,
    automation: AutomationRecord,
    yamlText: string,
  ): Promise<EvaluatorConfigResponse> {
    const { config, issues } = configIssues(yamlText, this.opts);
    if (!config)
      throw new ApiError(
        400,
        'invalid_evaluators',
        `invalid evaluator configuration: ${issues[0]?.field}: ${issues[0]?.message}`,
        issues,
      );
    await this.store.put({
      tenant,
      automationId: automation.id,
      yaml: yamlText,
      updatedAt: new Date().toISOString(),
    });
    this.cache.set(JSON.stringify([tenant, automation.id]), { yaml: yamlText, config });
    return configView(automation, yamlText, config);
  }
}

function configView(
  automation: AutomationRecord,
  yaml: string,
  config: EvaluatorConfig | undefined,
): EvaluatorConfigResponse {
  return {
    automationId: automation.id,
    automationType: automation.type,
    yaml,
    config: {
      // The parsed definitions, defaults filled in (weight, threshold, type-specific options).
      evaluators: [...(config?.evaluators ?? [])],
      passThreshold: config?.passThreshold ?? DEFAULT_PASS_THRESHOLD,
    },
  };
}
