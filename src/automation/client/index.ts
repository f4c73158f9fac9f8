// Public surface of the automation API client.
export { ServiceClient } from './service-client.js';
export type { ServiceClientOptions } from './options.js';
export { DEFAULT_BASE_URL, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_SECONDS } from './options.js';
export {
  ClientError,
  ClientValidationError,
  ClientAuthError,
  ClientForbiddenError,
  ClientNotFoundError,
  ClientRateLimitError,
  ClientServerError,
  ClientTimeoutError,
  isClientError,
} from './errors.js';
export type { ApiErrorEnvelope, ApiIssue, ClientErrorCode } from './errors.js';
export type { CallOptions } from './transport.js';
export { toFile, isFileValue } from './files.js';
export type { FileValue, NamedFile, FileDescriptor, FileReference } from './files.js';
export { isFinished } from './groups/run.js';
export type { RunTarget, RunOptions, RerunOptions, RunAndWaitOptions } from './groups/run.js';
export type { RunListFilters, RunExpand, ArtifactZipOptions } from './groups/runs.js';
export type { AutomationListQuery, ReviewHealthQuery } from './groups/automations.js';
export type { ExperimentListQuery, ExportFormat } from './groups/experiments.js';
export type { UploadOptions } from './groups/files.js';
export type * from './types.js';
export { TERMINAL_STATUSES } from './types.js';
