// The `runs` group: reading, listing, cancelling runs, their artifacts, reviews and promotion.
import { ClientError } from '../errors.js';
import { toBlob } from '../files.js';
import type { FileValue } from '../files.js';
import type { QueryValue } from '../query.js';
import { segment, slashPath } from '../query.js';
import type { CallOptions, Transport } from '../transport.js';
import type {
  PromoteRunRequest,
  PromoteRunResponse,
  Run,
  RunArtifactsResponse,
  RunCancelResponse,
  RunEventsResponse,
  RunListItem,
  RunReviewDetail,
  RunReviewExpectedArtifacts,
  RunReviewExpectedFileMutationResponse,
  RunReviewExpectedFileUpdateResponse,
  RunReviewRequest,
  RunScoresResponse,
  RunStepsResponse,
  RunTraceResponse,
  RunUsageResponse,
  RunsListResponse,
} from '../types.js';

export type RunExpand = 'input' | 'usage' | 'execution' | 'debug';

/**
 * Filters of GET /runs, named as the product SDK names them. snake_case spellings are accepted as
 * well; every name is sent in the SDK's camelCase. Lists are sent comma-separated, dates as
 * ISO-8601, booleans as true/false.
 */
export interface RunListFilters {
  type?: string | readonly string[];
  source?: string;
  status?: string | readonly string[];
  trigger?: string | readonly string[];
  triggeredBy?: string | readonly string[];
  sourceRef?: string;
  batchId?: string;
  exampleId?: string;
  exampleIdContains?: string;
  from?: string | Date;
  to?: string | Date;
  createdAfter?: string | Date;
  createdBefore?: string | Date;
  completedAfter?: string | Date;
  completedBefore?: string | Date;
  cursor?: string;
  offset?: number;
  limit?: number;
  ids?: string | readonly string[];
  experiments?: boolean | string;
  sort?: string;
  order?: 'asc' | 'desc';
  reviewStatus?: string;
  reviewVerdict?: string;
  hasReview?: boolean | string;
  noReview?: boolean | string;
  hasCorrections?: boolean | string;
  reviewNoteContains?: string;
  /** Run id, example id, review note or a string in the input metadata contains it (any case). */
  search?: string;
  reviewCreatedAfter?: string | Date;
  reviewCreatedBefore?: string | Date;
  reviewUpdatedAfter?: string | Date;
  reviewUpdatedBefore?: string | Date;
  reviewClosedAfter?: string | Date;
  reviewClosedBefore?: string | Date;
  sinceLastClosed?: boolean | string;
  /** 0 to 1: keep runs whose sampleRank is below it (a page may hold fewer than `limit` rows). */
  sampleRate?: number | string;
  [name: string]: QueryValue;
}

export interface ArtifactZipOptions {
  /** `review` gives a ZIP with `output/` and `expected/` folders. */
  bundle?: 'review';
  /** Signed download token: the request is then sent without the bearer key. */
  token?: string;
}

function runPath(runId: string, tail = ''): string {
  return `/runs/${segment(runId)}${tail}`;
}

export class RunArtifacts {
  constructor(private readonly transport: Transport) {}

  /** GET /runs/{id}/artifacts: the artifact paths of a run. */
  async list(runId: string, call?: CallOptions): Promise<RunArtifactsResponse> {
    return this.transport.json({ method: 'GET', path: runPath(runId, '/artifacts'), call });
  }

  /** GET /runs/{id}/artifacts?zip=1: the output files as ZIP bytes. */
  async zip(runId: string, options: ArtifactZipOptions = {}, call?: CallOptions): Promise<Uint8Array> {
    const query = { zip: 1, bundle: options.bundle, token: options.token };
    return this.transport.bytes({
      method: 'GET',
      path: runPath(runId, '/artifacts'),
      query,
      auth: options.token === undefined,
      call,
    });
  }

  /** GET /runs/{id}/artifacts/{path}: one artifact's bytes. */
  async download(runId: string, path: string, call?: CallOptions): Promise<Uint8Array> {
    return this.transport.bytes({
      method: 'GET',
      path: runPath(runId, `/artifacts/${slashPath(path)}`),
      call,
    });
  }
}

export class RunReviews {
  constructor(private readonly transport: Transport) {}

  /** GET /runs/{id}/reviews. */
  async get(runId: string, call?: CallOptions): Promise<RunReviewDetail> {
    return this.transport.json({ method: 'GET', path: runPath(runId, '/reviews'), call });
  }

  /** PUT /runs/{id}/reviews: create or replace the review. */
  async update(runId: string, review: RunReviewRequest, call?: CallOptions): Promise<RunReviewDetail> {
    return this.transport.json({ method: 'PUT', path: runPath(runId, '/reviews'), json: review, call });
  }

  /** Alias of {@link RunReviews.update}. */
  async put(runId: string, review: RunReviewRequest, call?: CallOptions): Promise<RunReviewDetail> {
    return this.update(runId, review, call);
  }

  /** DELETE /runs/{id}/reviews: removes metadata, corrections and corrected files. */
  async clear(runId: string, call?: CallOptions): Promise<RunReviewDetail> {
    return this.transport.json({ method: 'DELETE', path: runPath(runId, '/reviews'), call });
  }

  /** Alias of {@link RunReviews.clear}. */
  async delete(runId: string, call?: CallOptions): Promise<RunReviewDetail> {
    return this.clear(runId, call);
  }

  /** GET /runs/{id}/reviews/expected: the corrected (expected) artifacts. */
  async listExpected(runId: string, call?: CallOptions): Promise<RunReviewExpectedArtifacts> {
    return this.transport.json({ method: 'GET', path: runPath(runId, '/reviews/expected'), call });
  }

  /** POST /runs/{id}/reviews/expected (multipart `file`, optional `name`). */
  async uploadExpected(
    runId: string,
    file: FileValue,
    options: { name?: string } = {},
    call?: CallOptions,
  ): Promise<RunReviewExpectedFileMutationResponse> {
    const form = new FormData();
    const { blob, filename } = toBlob(file, options.name ?? 'file');
    form.append('file', blob, filename);
    if (options.name !== undefined) form.append('name', options.name);
    return this.transport.json({ method: 'POST', path: runPath(runId, '/reviews/expected'), form, call });
  }

  /** POST /runs/{id}/reviews/expected (JSON): copy an output file into the expected files. */
  async copyOutputToExpected(
    runId: string,
    outputFileName: string,
    options: { expectedName?: string } = {},
    call?: CallOptions,
  ): Promise<RunReviewExpectedFileMutationResponse> {
    const json: Record<string, string> = { outputFileName };
    if (options.expectedName !== undefined) json['expectedName'] = options.expectedName;
    return this.transport.json({ method: 'POST', path: runPath(runId, '/reviews/expected'), json, call });
  }

  /** GET /runs/{id}/reviews/expected/{filename}: bytes. */
  async downloadExpected(runId: string, filename: string, call?: CallOptions): Promise<Uint8Array> {
    return this.transport.bytes({
      method: 'GET',
      path: runPath(runId, `/reviews/expected/${segment(filename)}`),
      call,
    });
  }

  /** PATCH /runs/{id}/reviews/expected/{filename} with `{ name }`: rename a corrected file. */
  async renameExpected(
    runId: string,
    filename: string,
    newFilename: string,
    call?: CallOptions,
  ): Promise<RunReviewExpectedFileUpdateResponse> {
    return this.transport.json({
      method: 'PATCH',
      path: runPath(runId, `/reviews/expected/${segment(filename)}`),
      json: { name: newFilename },
      call,
    });
  }

  /** As {@link RunReviews.renameExpected}, with the request body (RunReviewExpectedFileUpdateRequest). */
  async updateExpected(
    runId: string,
    filename: string,
    update: { name: string },
    call?: CallOptions,
  ): Promise<RunReviewExpectedFileUpdateResponse> {
    return this.renameExpected(runId, filename, update.name, call);
  }

  /** DELETE /runs/{id}/reviews/expected/{filename}: answers 204. */
  async deleteExpected(runId: string, filename: string, call?: CallOptions): Promise<void> {
    await this.transport.empty({
      method: 'DELETE',
      path: runPath(runId, `/reviews/expected/${segment(filename)}`),
      call,
    });
  }
}

/** `runs.scores(id)` as in earlier versions, and `runs.scores.list(id)` as in the product SDK. */
export type RunScores = ((runId: string, call?: CallOptions) => Promise<RunScoresResponse>) & {
  /** GET /runs/{id}/scores: automated evaluator results. */
  list(runId: string, call?: CallOptions): Promise<RunScoresResponse>;
};

/** `runs.trace(id)` as in earlier versions, and `runs.trace.get(id)` as in the product SDK. */
export type RunTrace = ((runId: string, call?: CallOptions) => Promise<RunTraceResponse>) & {
  /** GET /runs/{id}/trace. */
  get(runId: string, call?: CallOptions): Promise<RunTraceResponse>;
};

export class RunsGroup {
  readonly artifacts: RunArtifacts;
  readonly reviews: RunReviews;
  readonly scores: RunScores;
  readonly trace: RunTrace;

  constructor(private readonly transport: Transport) {
    this.artifacts = new RunArtifacts(transport);
    this.reviews = new RunReviews(transport);
    const scores = (runId: string, call?: CallOptions): Promise<RunScoresResponse> =>
      this.transport.json({ method: 'GET', path: runPath(runId, '/scores'), call });
    this.scores = Object.assign(scores, { list: scores });
    const trace = (runId: string, call?: CallOptions): Promise<RunTraceResponse> =>
      this.transport.json({ method: 'GET', path: runPath(runId, '/trace'), call });
    this.trace = Object.assign(trace, { get: trace });
  }

  /** GET /runs/{id}; `expand` adds the input, usage, execution or debug sections. */
  async get(
    runId: string,
    options: { expand?: RunExpand | readonly RunExpand[] } = {},
    call?: CallOptions,
  ): Promise<Run> {
    return this.transport.json({
      method: 'GET',
      path: runPath(runId),
      query: { expand: options.expand },
      call,
    });
  }

  /** GET /runs: one page (`{ runs, nextCursor }`). */
  async list(filters: RunListFilters = {}, call?: CallOptions): Promise<RunsListResponse> {
    return this.transport.json({ method: 'GET', path: '/runs', query: filters, call });
  }

  /**
   * Every run matching `filters`, following `nextCursor` page by page (`limit` is the page size).
   * With sampleRate a page can be short or empty, so only a missing cursor ends the walk.
   */
  async *iterate(
    filters: RunListFilters = {},
    call?: CallOptions,
  ): AsyncGenerator<RunListItem, void, undefined> {
    let cursor = typeof filters.cursor === 'string' ? filters.cursor : undefined;
    const seen = new Set<string>();
    while (true) {
      const page = await this.list(cursor === undefined ? filters : { ...filters, cursor }, call);
      for (const run of page.runs ?? []) yield run;
      const next = page.nextCursor;
      if (typeof next !== 'string' || next.length === 0) return;
      // A server handing back a cursor it already gave would otherwise loop forever.
      if (seen.has(next))
        throw new ClientError(`GET /runs returned cursor ${next} twice`, 'invalid_response');
      seen.add(next);
      cursor = next;
    }
  }

  /** POST /runs/{id}/cancel: queued → cancelled, in flight → requested, terminal → already_terminal. */
  async cancel(runId: string, call?: CallOptions): Promise<RunCancelResponse> {
    return this.transport.json({ method: 'POST', path: runPath(runId, '/cancel'), idempotent: true, call });
  }

  /** GET /runs/{id}/events: the chronological lifecycle timeline. */
  async events(runId: string, call?: CallOptions): Promise<RunEventsResponse> {
    return this.transport.json({ method: 'GET', path: runPath(runId, '/events'), call });
  }

  /** GET /runs/{id}/steps. */
  async steps(runId: string, call?: CallOptions): Promise<RunStepsResponse> {
    return this.transport.json({ method: 'GET', path: runPath(runId, '/steps'), call });
  }

  /** GET /runs/{id}/usage. */
  async usage(runId: string, call?: CallOptions): Promise<RunUsageResponse> {
    return this.transport.json({ method: 'GET', path: runPath(runId, '/usage'), call });
  }

  /** POST /runs/{id}/promote: the reviewed run becomes a dataset example. */
  async promote(
    runId: string,
    body: PromoteRunRequest = {},
    call?: CallOptions,
  ): Promise<PromoteRunResponse> {
    return this.transport.json({ method: 'POST', path: runPath(runId, '/promote'), json: body, call });
  }
}
