// The `automations` group: metadata, sync, versions, triggers, dataset, evaluators, review health.
import { toBlob } from '../files.js';
import type { FileValue } from '../files.js';
import type { QueryValue } from '../query.js';
import { segment } from '../query.js';
import type { CallOptions, Transport } from '../transport.js';
import type {
  AutomationSummary,
  AutomationType,
  AutomationVersion,
  JsonObject,
  OffsetPage,
  SyncResponse,
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

/** Query of GET /automations/{id}/reviews/health; camelCase names are accepted as well. */
export interface ReviewHealthQuery {
  type?: string | readonly string[];
  status?: string | readonly string[];
  trigger?: string | readonly string[];
  triggered_by?: string | readonly string[];
  source_ref?: string;
  batch_id?: string;
  example_id?: string;
  example_id_contains?: string;
  from?: string | Date;
  to?: string | Date;
  completed_after?: string | Date;
  completed_before?: string | Date;
  experiments?: boolean;
  bucket?: 'day' | 'week' | 'month';
  rolling_window?: number;
  min_rolling_reviews?: number;
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
      query: { example_ids: options.exampleIds },
      call,
    });
  }

  /**
   * POST /automations/{id}/dataset/import: the ZIP goes as multipart part `file`; `mode` is sent
   * in the query (as the spec lists it) and as a form field (as the product's client does).
   */
  async import(
    automationId: string,
    archive: FileValue,
    options: { mode?: 'append' | 'replace' } = {},
    call?: CallOptions,
  ): Promise<JsonObject> {
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
      query: { mode },
      form,
      call,
    });
  }
}

export class EvaluatorsGroup {
  constructor(private readonly transport: Transport) {}

  /** GET /automations/{id}/evaluators. */
  async get(automationId: string, call?: CallOptions): Promise<JsonObject> {
    return this.transport.json({ method: 'GET', path: automationPath(automationId, '/evaluators'), call });
  }

  /** PUT /automations/{id}/evaluators with `{ yaml }`; a 400 lists the YAML's problems. */
  async put(
    automationId: string,
    config: string | { yaml: string; [key: string]: unknown },
    call?: CallOptions,
  ): Promise<JsonObject> {
    const json = typeof config === 'string' ? { yaml: config } : config;
    return this.transport.json({
      method: 'PUT',
      path: automationPath(automationId, '/evaluators'),
      json,
      call,
    });
  }
}

export class AutomationReviews {
  constructor(private readonly transport: Transport) {}

  /** GET /automations/{id}/reviews/health: coverage and correctness of human reviews. */
  async health(automationId: string, query: ReviewHealthQuery = {}, call?: CallOptions): Promise<JsonObject> {
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
  async list(query: AutomationListQuery = {}, call?: CallOptions): Promise<OffsetPage<AutomationSummary>> {
    return this.transport.json({ method: 'GET', path: '/automations', query: { ...query }, call });
  }

  /** GET /automations/{id}; `id` may be an id or `workflows.<slug>` / `agents.<slug>`. */
  async get(id: string, call?: CallOptions): Promise<AutomationSummary> {
    return this.transport.json({ method: 'GET', path: automationPath(id), call });
  }

  /** POST /automations/{id}/sync: reconcile with the latest release (idempotent). */
  async sync(id: string, call?: CallOptions): Promise<SyncResponse> {
    return this.transport.json({ method: 'POST', path: automationPath(id, '/sync'), idempotent: true, call });
  }

  /** GET /automations/{id}/versions. */
  async versions(id: string, call?: CallOptions): Promise<OffsetPage<AutomationVersion>> {
    return this.transport.json({ method: 'GET', path: automationPath(id, '/versions'), call });
  }

  /** GET /automations/{id}/triggers (read-only). */
  async triggers(id: string, call?: CallOptions): Promise<JsonObject> {
    return this.transport.json({ method: 'GET', path: automationPath(id, '/triggers'), call });
  }
}
