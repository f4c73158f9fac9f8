// Public surface of the automation API client.
export { ServiceClient } from './service-client.js';
export type { ServiceClientOptions } from './options.js';
export {
  DEFAULT_BASE_URL,
  DEFAULT_MAX_RETRIES,
  DEFAULT_MULTIPART_MAX_BYTES,
  DEFAULT_TIMEOUT_SECONDS,
} from './options.js';
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
export type { FileValue, NamedFile, FileDescriptor, FileReference, FileIdReference } from './files.js';
export { isFinished } from './groups/run.js';
export type { RunTarget, RunOptions, RerunOptions, RunAndWaitOptions } from './groups/run.js';
export type { RunListFilters, RunExpand, ArtifactZipOptions, RunScores, RunTrace } from './groups/runs.js';
export type {
  ExampleFileList,
  ExampleFileRenameResponse,
  ExampleFileUpload,
  ExampleFileUploadResponse,
  ExampleFolder,
} from './groups/examples.js';
export { filesToUploadFirst, MULTIPART_HEADROOM_BYTES } from './upload-limits.js';
export type { AutomationListQuery, ReviewHealthQuery } from './groups/automations.js';
export type { ExperimentListQuery, ExportFormat } from './groups/experiments.js';
export type { UploadOptions, CreateUploadInput, FilePurpose } from './groups/files.js';
export type * from './types.js';
export { TERMINAL_STATUSES } from './types.js';
