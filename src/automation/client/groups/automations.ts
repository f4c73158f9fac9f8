// The `automations` group: metadata, sync, versions, triggers, dataset, evaluators, review health.
import { toBlob } from '../files.js';
import type { FileValue } from '../files.js';
import type { QueryValue } from '../query.js';
import { segment } from '../query.js';
import type { CallOptions, Transport } from '../transport.js';
import type {
  AutomationDetail,
  AutomationTriggersResponse,
  AutomationType,
  AutomationsSyncResponse,
  DatasetImportResponse,
  EvaluatorConfigResponse,
  ListAutomationVersionsResponse,
  ListAutomationsResponse,
  RunReviewHealthResponse,
} from '../types.js';
import { ExamplesGroup } from './examples.js';
import { ExperimentsGroup } from './experiments.js';

export interface AutomationListQuery {
  /** Substring of slug, name or description. */
  search?: string;
  type?: AutomationType;
  limit?: number;
  offset?: number;
}

/**
 * Query of GET /automations/{id}/reviews/health, named as the product SDK names it; snake_case
 * spellings are accepted as well and sent in the SDK's camelCase.
 */
export interface ReviewHealthQuery {
  type?: string | readonly string[];
  status?: string | readonly string[];
  trigger?: string | readonly string[];
  triggeredBy?: string | readonly string[];
  sourceRef?: string;
  batchId?: string;
  exampleId?: string;
  exampleIdContains?: string;
  from?: string | Date;
  to?: string | Date;
  completedAfter?: string | Date;
  completedBefore?: string | Date;
  experiments?: boolean | string;
  bucket?: 'day' | 'week' | 'month';
  rollingWindow?: number;
  minRollingReviews?: number;
  [name: string]: QueryValue;
}

function automationPath(id: string, tail = ''): string {
  return `/automations/${segment(id)}${tail}`;
}

export class DatasetGroup {
  constructor(private readonly transport: Transport) {}

  /** GET /automations/{id}/dataset/export: ZIP bytes (`examples/<id>/input|expected`). */
  async export(
    automationId: string,
    options: { exampleIds?: readonly string[] } = {},
    call?: CallOptions,
  ): Promise<Uint8Array> {
    return this.transport.bytes({
      method: 'GET',
      path: automationPath(automationId, '/dataset/export'),
      query: { exampleIds: options.exampleIds },
      call,
    });
  }

  /**
   * POST /automations/{id}/dataset/import: the ZIP goes as multipart part `file` and `mode` as a
   * form field (AutomationDatasetImportMultipartRequest), as the product SDK sends them.
   */
  async import(
    automationId: string,
    archive: FileValue,
    options: { mode?: 'append' | 'replace' } = {},
    call?: CallOptions,
  ): Promise<DatasetImportResponse> {
    const mode = options.mode ?? 'append';
    const form = new FormData();
    const { blob, filename } = toBlob(archive, 'dataset.zip');
    form.append(
      'file',
      blob.type === 'application/octet-stream' ? blob.slice(0, blob.size, 'application/zip') : blob,
      filename,
    );
    form.append('mode', mode);
    return this.transport.json({
      method: 'POST',
      path: automationPath(automationId, '/dataset/import'),
      form,
      call,
    });
  }
}

export class EvaluatorsGroup {
  constructor(private readonly transport: Transport) {}

  /** GET /automations/{id}/evaluators. */
  async get(automationId: string, call?: CallOptions): Promise<EvaluatorConfigResponse> {
    return this.transport.json({ method: 'GET', path: automationPath(automationId, '/evaluators'), call });
  }

  /** PUT /automations/{id}/evaluators with `{ yaml }`; a 400 lists the YAML's problems. */
  async update(
    automationId: string,
    config: string | { yaml: string },
    call?: CallOptions,
  ): Promise<EvaluatorConfigResponse> {
    const json = typeof config === 'string' ? { yaml: config } : config;
    return this.transport.json({
      method: 'PUT',
      path: automationPath(automationId, '/evaluators'),
      json,
      call,
    });
  }

  /** Alias of {@link EvaluatorsGroup.update}. */
  async put(
    automationId: string,
    config: string | { yaml: string },
    call?: CallOptions,
  ): Promise<EvaluatorConfigResponse> {
    return this.update(automationId, config, call);
  }
}

export class AutomationReviews {
  constructor(private readonly transport: Transport) {}

  /** GET /automations/{id}/reviews/health: coverage and correctness of human reviews. */
  async health(
    automationId: string,
    query: ReviewHealthQuery = {},
    call?: CallOptions,
  ): Promise<RunReviewHealthResponse> {
    return this.transport.json({
      method: 'GET',
      path: automationPath(automationId, '/reviews/health'),
      query,
      call,
    });
  }
}

export class AutomationsGroup {
  readonly examples: ExamplesGroup;
  readonly dataset: DatasetGroup;
  readonly evaluators: EvaluatorsGroup;
  readonly reviews: AutomationReviews;
  /** The same object as `client.experiments`. */
  readonly experiments: ExperimentsGroup;

  constructor(
    private readonly transport: Transport,
    experiments: ExperimentsGroup,
  ) {
    this.examples = new ExamplesGroup(transport);
    this.dataset = new DatasetGroup(transport);
    this.evaluators = new EvaluatorsGroup(transport);
    this.reviews = new AutomationReviews(transport);
    this.experiments = experiments;
  }

  /** GET /automations (offset paging). */
  async list(query: AutomationListQuery = {}, call?: CallOptions): Promise<ListAutomationsResponse> {
    return this.transport.json({ method: 'GET', path: '/automations', query: { ...query }, call });
  }

  /** GET /automations/{id}; `id` may be an id or `workflows.<slug>` / `agents.<slug>`. */
  async get(id: string, call?: CallOptions): Promise<AutomationDetail> {
    return this.transport.json({ method: 'GET', path: automationPath(id), call });
  }

  /** POST /automations/{id}/sync: reconcile with the latest release (idempotent). */
  async sync(id: string, call?: CallOptions): Promise<AutomationsSyncResponse> {
    return this.transport.json({ method: 'POST', path: automationPath(id, '/sync'), idempotent: true, call });
  }

  /** GET /automations/{id}/versions. */
  async versions(id: string, call?: CallOptions): Promise<ListAutomationVersionsResponse> {
    return this.transport.json({ method: 'GET', path: automationPath(id, '/versions'), call });
  }

  /** GET /automations/{id}/triggers (read-only). */
  async triggers(id: string, call?: CallOptions): Promise<AutomationTriggersResponse> {
    return this.transport.json({ method: 'GET', path: automationPath(id, '/triggers'), call });
  }
}
