// The `experiments` group: batches that run dataset examples and record evaluator scores.
import { readNdjson } from '../ndjson.js';
import { segment } from '../query.js';
import type { CallOptions, Transport } from '../transport.js';
import type {
  AutomationsExperimentsListResponse,
  ExperimentCreate,
  ExperimentCreateResponse,
  ExperimentDetail,
  ExperimentRef,
  ExperimentStreamEvent,
} from '../types.js';

export interface ExperimentListQuery {
  limit?: number;
  offset?: number;
  /** Date or relative date, inclusive. */
  from_date?: string | Date;
  fromDate?: string | Date;
  to_date?: string | Date;
  toDate?: string | Date;
}

export type ExportFormat = 'csv' | 'json';

function experimentsPath(automationId: string, tail = ''): string {
  return `/automations/${segment(automationId)}/experiments${tail}`;
}

export class ExperimentsGroup {
  constructor(private readonly transport: Transport) {}

  /** POST /automations/{id}/experiments: starts a batch (asynchronous). Omit `examples` for the whole dataset. */
  async create(
    automationId: string,
    body: ExperimentCreate = {},
    call?: CallOptions,
  ): Promise<ExperimentCreateResponse> {
    return this.transport.json({ method: 'POST', path: experimentsPath(automationId), json: body, call });
  }

  /** GET /automations/{id}/experiments. */
  async list(
    automationId: string,
    query: ExperimentListQuery = {},
    call?: CallOptions,
  ): Promise<AutomationsExperimentsListResponse> {
    return this.transport.json({
      method: 'GET',
      path: experimentsPath(automationId),
      query: { ...query },
      call,
    });
  }

  /** GET /automations/{id}/experiments/{experimentId}. */
  async get(automationId: string, experimentId: string, call?: CallOptions): Promise<ExperimentDetail> {
    return this.transport.json({
      method: 'GET',
      path: experimentsPath(automationId, `/${segment(experimentId)}`),
      call,
    });
  }

  /** POST …/experiments/{experimentId}/cancel: completed runs are kept, queued or running work is cancelled. */
  async cancel(automationId: string, experimentId: string, call?: CallOptions): Promise<ExperimentDetail> {
    return this.transport.json({
      method: 'POST',
      path: experimentsPath(automationId, `/${segment(experimentId)}/cancel`),
      idempotent: true,
      call,
    });
  }

  /**
   * GET …/experiments/{experimentId}/export?format=csv|json: the results as text, verbatim
   * (default csv, as the product SDK). `includeTrace` adds each run's trace.
   */
  async export(
    automationId: string,
    experimentId: string,
    options: { format?: ExportFormat; includeTrace?: boolean } = {},
    call?: CallOptions,
  ): Promise<string> {
    return this.transport.text({
      method: 'GET',
      path: experimentsPath(automationId, `/${segment(experimentId)}/export`),
      query: { format: options.format ?? 'csv', includeTrace: options.includeTrace },
      call,
    });
  }

  /** GET /automations/{id}/experiments/export?format=csv|json: all eval results of the automation (default csv). */
  async exportAll(
    automationId: string,
    options: { format?: ExportFormat } = {},
    call?: CallOptions,
  ): Promise<string> {
    return this.transport.text({
      method: 'GET',
      path: experimentsPath(automationId, '/export'),
      query: { format: options.format ?? 'csv' },
      call,
    });
  }

  /** GET /experiments/{experimentId}: which automation owns an experiment. */
  async resolve(experimentId: string, call?: CallOptions): Promise<ExperimentRef> {
    return this.transport.json({ method: 'GET', path: `/experiments/${segment(experimentId)}`, call });
  }

  /** Alias of {@link ExperimentsGroup.resolve}. */
  async ref(experimentId: string, call?: CallOptions): Promise<ExperimentRef> {
    return this.resolve(experimentId, call);
  }

  /**
   * POST /automations/{id}/experiments/stream, as the product SDK returns it: the NDJSON body as
   * a byte stream (one JSON event per line). The time-out bounds the wait for the answer's
   * headers; reading the stream is up to the caller. {@link ExperimentsGroup.stream} parses it.
   */
  async createStream(
    automationId: string,
    body: ExperimentCreate = {},
    call?: CallOptions,
  ): Promise<ReadableStream<Uint8Array>> {
    const response = await this.transport.stream({
      method: 'POST',
      path: experimentsPath(automationId, '/stream'),
      json: body,
      accept: 'application/x-ndjson',
      call,
    });
    // The caller reads at its own pace, so no idle timer runs while it does.
    response.finish();
    return response.body;
  }

  /**
   * POST /automations/{id}/experiments/stream: starts a batch and yields one event per completed
   * run as the server reports it. The time-out bounds the silence between events, not the
   * experiment's length. Leaving the loop early closes the connection.
   */
  async *stream(
    automationId: string,
    body: ExperimentCreate = {},
    call?: CallOptions,
  ): AsyncGenerator<ExperimentStreamEvent, void, undefined> {
    const response = await this.transport.stream({
      method: 'POST',
      path: experimentsPath(automationId, '/stream'),
      json: body,
      accept: 'application/x-ndjson',
      call,
    });
    try {
      yield* readNdjson<ExperimentStreamEvent>(response.body, response.touch, response.requestId);
    } catch (error) {
      throw response.mapError(error);
    } finally {
      response.finish();
    }
  }
}
