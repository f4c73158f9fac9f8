// Bounds on every archive the automation service reads or writes (dataset import and export,
// artifact ZIPs). Read once in src/automation/settings.ts; documented in docs/limits.md.

import { ApiError } from '../errors.js';
import { CodedError } from '../../core/errors.js';

export interface ArchiveLimits {
  /** Size of an uploaded (compressed) archive. */
  maxBytes: number;
  /** Sum of the uncompressed sizes of an archive's entries, read or written. */
  maxUncompressedBytes: number;
  /** Entries of an archive, read or written. */
  maxEntries: number;
}

/** A refusal that crosses the worker boundary as plain data (class instances do not survive it). */
export interface ArchiveFailure {
  ok: false;
  status: 400 | 413;
  code: string;
  message: string;
  issues: { field: string; message: string; code: string }[];
}

export const SETTING = {
  maxBytes: 'AUTOMATION_ARCHIVE_MAX_BYTES',
  maxUncompressedBytes: 'AUTOMATION_ARCHIVE_MAX_UNCOMPRESSED_BYTES',
  maxEntries: 'AUTOMATION_ARCHIVE_MAX_ENTRIES',
} as const;

/** 413 naming the limit and the setting that moves it. */
export function overLimit(which: keyof ArchiveLimits, limits: ArchiveLimits, what: string): ArchiveFailure {
  const message = `${what} more than ${limits[which]} ${which === 'maxEntries' ? 'entries' : 'bytes'} (limit ${SETTING[which]}=${limits[which]})`;
  return {
    ok: false,
    status: 413,
    code: 'archive_too_large',
    message,
    issues: [{ field: 'file', message, code: 'archive_too_large' }],
  };
}

export function refused(issues: { field: string; message: string; code: string }[]): ArchiveFailure {
  return {
    ok: false,
    status: 400,
    code: 'invalid_archive',
    message: `invalid archive: ${issues[0]?.message ?? 'unreadable'}`,
    issues: issues.slice(0, 50),
  };
}

export function toServiceError(f: ArchiveFailure): ApiError {
  return new ApiError(f.status, f.code, f.message, f.issues);
}

/** Thrown inside a worker task to stop it with a refusal; the task entry turns it into data. */
export class ArchiveRefusal extends CodedError {
  constructor(readonly failure: ArchiveFailure) {
    super(failure.code, failure.message);
  }
}
