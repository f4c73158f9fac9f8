// What the automation service hands its features (evaluators, datasets, experiments, reviews).
// Each feature module takes the part of this it uses (a `Pick<FeatureHost, …>`), builds its own
// services from it and returns its routes (docs/architecture.md, "Automation features"). Only
// types are imported here, so no feature depends on the service that starts it.

import type { Logger } from '../core/log.js';
import type { ArchivePool } from './archives/pool.js';
import type { ApiRoute } from './http/api.js';
import type { ScriptPool } from './evals/index.js';
import type { AutomationRegistry } from './registry/service.js';
import type { RunService } from './runs/service.js';
import type { AutomationSettings } from './settings.js';
import type { AutomationStores } from './stores.js';

export interface FeatureHost {
  settings: AutomationSettings;
  /** The stores the features keep their records in (the service builds them, stores.ts). */
  stores: Pick<
    AutomationStores,
    'examples' | 'experiments' | 'evaluatorConfigs' | 'reviews' | 'scores' | 'blobs'
  >;
  registry: AutomationRegistry;
  runs: RunService;
  /** Archive work (ZIP reading and writing) off the event loop. */
  archives: ArchivePool;
  /** Worker threads for tenant-written code and patterns: custom scripts, regexes, schemas. */
  evalPool: ScriptPool;
  /** Where requests stage their temporary files (uploads, imports, exports). */
  tmpDir: string;
  /** The automation service's logger. */
  log: Logger;
  /** Removes a blob written for a request if nothing came to reference it. */
  discardBlob(sha256: string): Promise<void>;
  /** Registers work to do when the service closes (after the HTTP server, before the pools). */
  onClose(fn: () => Promise<void>): void;
}

/** What a feature adds to the service. */
export interface Feature {
  /** Its routes, in the order the OpenAPI document lists them. */
  routes: ApiRoute[];
}
