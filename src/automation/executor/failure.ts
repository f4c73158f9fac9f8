// Why a run ended without an output, as a stable code beside the human message. The code is
// stored on the run record (errorCode) and shown in `expand=debug` and on the run.failed /
// run.cancelled event; the public `error` field stays the message (RunError is a string).

import { CodedError } from '../../core/errors.js';

export type RunErrorCode =
  /** The automation's own code threw, or its agent/model provider failed. */
  | 'automation_error'
  /** The run exceeded its manifest timeout. */
  | 'run_timeout'
  /** The worker thread ended without a result (crashed, or killed for another reason). */
  | 'worker_crashed'
  /** The run was cancelled (by a caller, or by the service shutting down). */
  | 'cancelled'
  /** The pinned version could not be loaded from the registry. */
  | 'version_unavailable'
  /** An input file of the run is neither on this node nor in the shared blob store. */
  | 'input_unavailable'
  /** The service stopped while the run was in flight (found at the next start). */
  | 'service_interrupted';

/** The end of a run that did not complete: a coded error, never thrown past the run service. */
export class RunFailure extends CodedError {
  declare readonly code: RunErrorCode;

  constructor(code: RunErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
