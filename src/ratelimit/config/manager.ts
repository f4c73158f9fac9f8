// Turns provider events into the live rule set: compile, swap one reference, count
// config_load_success / config_load_error, and drive the `config` health component. A failed
// load keeps the previous rule set.

import type { Logger } from '../../core/log.js';
import { STAT } from '../stats/names.js';
import type { SharedStatsTable } from '../stats/shared-table.js';
import { compileRuleSet, type CompileOptions } from './compile.js';
import { ConfigError } from './errors.js';
import type { ConfigEvent, ConfigProvider } from './provider.js';
import type { RuleSet } from './rules.js';

export interface ConfigManagerOptions {
  provider: ConfigProvider;
  compile: Omit<CompileOptions, 'nowMs'>;
  onRules: (rules: RuleSet) => void;
  stats: SharedStatsTable;
  /** Only one thread counts loads, so the shared counters are not multiplied by the thread count. */
  countStats: boolean;
  /** Health hook for HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED. */
  onDomainsLoaded?: (domains: number) => void;
  log?: Logger;
}

export class ConfigManager {
  private rules: RuleSet | undefined;
  private lastError: Error | undefined;
  private loads = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(private readonly options: ConfigManagerOptions) {}

  get current(): RuleSet | undefined {
    return this.rules;
  }

  get error(): Error | undefined {
    return this.lastError;
  }

  /** Number of provider events handled (good or bad); tests wait on it. */
  get loadCount(): number {
    return this.loads;
  }

  async start(): Promise<void> {
    await this.options.provider.start((event) => this.handle(event));
  }

  /** Resolves at the next handled load event. */
  nextLoad(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  async close(): Promise<void> {
    await this.options.provider.close();
  }

  private handle(event: ConfigEvent): void {
    const { options } = this;
    try {
      if (!event.ok) throw event.error;
      const rules = compileRuleSet(event.documents, options.compile);
      this.rules = rules;
      this.lastError = undefined;
      options.onRules(rules);
      if (options.countStats) options.stats.inc(STAT.configLoadSuccess);
      options.onDomainsLoaded?.(rules.domains.size);
      options.log?.info(
        { files: rules.files, domains: [...rules.domains.keys()] },
        'rate limit configuration loaded',
      );
    } catch (error) {
      this.lastError = error as Error;
      if (options.countStats) options.stats.inc(STAT.configLoadError);
      const path = error instanceof ConfigError ? error.path : undefined;
      options.log?.error(
        { err: (error as Error).message, ...(path ? { descriptorPath: path } : {}) },
        'rate limit configuration not loaded; keeping the previous one',
      );
    } finally {
      this.loads++;
      for (const w of this.waiters.splice(0)) w();
    }
  }
}
