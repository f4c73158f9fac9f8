// The route table type shared by the router registration and the OpenAPI generator.

import type { TObject, TSchema } from '@sinclair/typebox';
import type { HttpRequest, HttpResponse } from '../../core/http/index.js';
import type { Authenticator } from '../../core/auth/types.js';
import type { Logger } from '../../core/log.js';
import type { AutomationSettings } from '../settings.js';
import type { AutomationRegistry } from '../registry/service.js';
import type { RunService } from '../runs/service.js';
import type { FileStore } from '../files/store.js';
import type { ScoreStore } from '../runs/scores.js';
import type { DownloadTokens } from './tokens.js';
import type { ArchivePool } from '../archives/pool.js';
import type { ParamKind } from './ids.js';
import type { RunListPage, RunListQuery } from '../runs/list.js';
import type { RunRecord } from '../runs/types.js';
import type { RunReview } from '../wire/reviews.js';

export interface ApiDeps {
  settings: AutomationSettings;
  registry: AutomationRegistry;
  runs: RunService;
  files: FileStore;
  scores: ScoreStore;
  tokens: DownloadTokens;
  auth: Authenticator;
  /** The automation service's logger. */
  log: Logger;
  tmpDir: string;
  /** Archive work (ZIP reading and writing) off the event loop. */
  archives: ArchivePool;
  listRuns(q: RunListQuery): Promise<RunListPage>;
  /** Time of the tenant's latest closed review (the review side keeps it); undefined when none. */
  lastReviewClosedAt(tenant: string): Promise<number | undefined>;
  /** The corrected files of a run's review (the review bundle's expected/), empty without one. */
  /** The run's full review as the wire shows it; null when it has none. */
  runReview(run: RunRecord): Promise<RunReview | null>;
  expectedFiles(run: RunRecord): Promise<{ name: string; size: number; sha256?: string | undefined }[]>;
  /** Registers work to do when the service closes (after the HTTP server, before the run pool). */
  onClose?(fn: () => Promise<void>): void;
}

export interface ApiResponseSpec {
  description: string;
  schema?: TSchema;
  contentType?: string;
  /** An answer in one of several content types: each type's schema (instead of schema/contentType). */
  content?: Readonly<Record<string, TSchema>>;
}

export interface ApiRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** OpenAPI form, below /api/v1: `/runs/{id}`; a trailing `{path}` takes the rest of the path. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  /** false: no bearer key required by the core (the handler checks itself). */
  public?: boolean;
  /** Kinds of path parameters whose names are not in PARAM_KINDS (http/ids.ts). */
  params?: Readonly<Record<string, ParamKind>>;
  query?: TObject;
  body?: {
    schema?: TSchema;
    contentTypes: string[];
    description?: string;
    /** The schema of a content type whose body differs from `schema` (e.g. multipart form fields). */
    schemas?: Readonly<Record<string, TSchema>>;
  };
  responses: Record<number, ApiResponseSpec>;
  maxBodyBytes?: number;
  handle(req: HttpRequest, res: HttpResponse): Promise<void> | void;
}
