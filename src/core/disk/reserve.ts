// A free-space reserve on the file system of a store. Writers ask it before they write; below the
// reserve a write is refused with StorageFullError (HTTP 507) instead of being attempted.
//
// Why refuse before the disk is full rather than let the write fail: LMDB as bundled by lmdb-js
// cannot fail a commit cleanly on a full disk. A failed page write makes it format its error text
// with sprintf into a 100-byte heap buffer, and the text is often longer (large file offsets,
// uninitialised iovec lengths), which corrupts the heap: glibc then aborts the process
// ("corrupted size vs. prev_size", SIGABRT). With the write map instead of pwrite, a full disk is a
// SIGBUS. So a store that shares a disk with LMDB must never take the last bytes (docs/deployment.md,
// "A full disk").
//
// The check is cheap: statfs at most every CHECK_INTERVAL_MS, or sooner once the bytes admitted
// since the last look reach an eighth of the reserve. In between, admitted bytes count against the
// free space last seen (twice over, for LMDB's page and copy-on-write overhead).

import { statfsSync } from 'node:fs';
import { CodedError } from '../errors.js';

/** Re-read the free space at least this often while writes are asked for. */
export const CHECK_INTERVAL_MS = 100;
/** Admitted bytes count this many times against the free space (B-tree pages, copy-on-write). */
const WRITE_AMPLIFICATION = 2;

/** A write refused or failed because the store's file system is (nearly) full. */
export class StorageFullError extends CodedError {
  constructor(
    /** Which store: "streams log", "automation files" … */
    readonly store: string,
    /** The directory of the store (its file system is the full one); logged, never answered. */
    readonly path: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      'insufficient_storage',
      `insufficient storage: the ${store} cannot take this write: ${detail}; ` +
        'nothing of it was stored — free disk space and retry',
      options,
    );
  }
}

export function isStorageFullError(error: unknown): error is StorageFullError {
  return error instanceof StorageFullError;
}

/** Reads the bytes an unprivileged writer may still use on `path`'s file system. */
export type FreeSpaceProbe = (path: string) => number;

export const statfsFree: FreeSpaceProbe = (path) => {
  const s = statfsSync(path);
  return s.bavail * s.bsize;
};

export interface DiskReserveOptions {
  /** Which store this guards, as messages name it ("streams log"). */
  store: string;
  /** A directory on the store's file system. */
  path: string;
  /** Bytes kept free (SLUICE_DISK_RESERVE); 0 turns the check off. */
  reserveBytes: number;
  /** Called when writes start being refused (`full`) and when they are accepted again. */
  onChange: (full: boolean, freeBytes: number) => void;
  probe?: FreeSpaceProbe;
  now?: () => number;
}

export class DiskReserve {
  readonly store: string;
  readonly path: string;
  readonly reserveBytes: number;
  private readonly probe: FreeSpaceProbe;
  private readonly now: () => number;
  private free = 0;
  private admitted = 0;
  private checkedAt = Number.NEGATIVE_INFINITY;
  private full = false;

  constructor(private readonly options: DiskReserveOptions) {
    this.store = options.store;
    this.path = options.path;
    this.reserveBytes = options.reserveBytes;
    this.probe = options.probe ?? statfsFree;
    this.now = options.now ?? (() => performance.now());
  }

  /**
   * Throws StorageFullError when writing about `bytes` more would leave less than the reserve
   * free. On success the bytes count as written until the next look at the file system.
   */
  admit(bytes: number): void {
    if (this.reserveBytes <= 0) return;
    const cost = bytes * WRITE_AMPLIFICATION;
    const now = this.now();
    if (now - this.checkedAt >= CHECK_INTERVAL_MS || this.admitted + cost >= this.reserveBytes / 8) {
      this.look(now);
    }
    const free = Math.max(0, this.free - this.admitted);
    if (free - cost < this.reserveBytes) {
      this.setFull(true, free);
      throw new StorageFullError(
        this.store,
        this.path,
        `${formatBytes(free)} free, the write needs about ${formatBytes(cost)} and ` +
          `SLUICE_DISK_RESERVE keeps ${formatBytes(this.reserveBytes)} free`,
      );
    }
    this.setFull(false, free);
    this.admitted += cost;
  }

  private setFull(full: boolean, free: number): void {
    if (full === this.full) return;
    this.full = full;
    this.options.onChange(full, free);
  }

  private look(now: number): void {
    this.checkedAt = now;
    this.admitted = 0;
    try {
      this.free = this.probe(this.path);
    } catch {
      // The directory is unreadable (removed, not mounted): let the write itself report that.
      this.free = Number.POSITIVE_INFINITY;
    }
  }
}

/**
 * True for errors that mean "no space": ENOSPC/EDQUOT from the file system (Node's string codes
 * or LMDB's numbers), LMDB's map full, PostgreSQL's disk_full (SQLSTATE 53100).
 */
export function isOutOfSpace(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (code === 'ENOSPC' || code === 'EDQUOT' || code === '53100') return true;
  if (code === 28 || code === 122 || code === -30792) return true; // ENOSPC, EDQUOT, MDB_MAP_FULL
  return /MDB_MAP_FULL|No space left on device|Disk quota exceeded/.test(error.message);
}

/** `error` as a StorageFullError of `store` when it means "no space", else unchanged. */
export function asStorageFull(error: unknown, store: string, path: string): unknown {
  if (error instanceof StorageFullError || !isOutOfSpace(error)) return error;
  return new StorageFullError(store, path, (error as Error).message, { cause: error });
}

export function formatBytes(n: number): string {
  if (!Number.isFinite(n)) return 'unknown';
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${n} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}

interface ReserveLog {
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
}

/** A reserve that logs when the store starts and stops refusing writes (one line each way). */
export function loggedReserve(
  store: string,
  path: string,
  reserveBytes: number,
  log: ReserveLog,
): DiskReserve {
  return new DiskReserve({
    store,
    path,
    reserveBytes,
    onChange: (full, free) => {
      const fields = { store, path, freeBytes: free, reserveBytes };
      if (full)
        log.warn(fields, `disk nearly full: writes to the ${store} are refused (507) until space is freed`);
      else
        log.info(
          fields,
          `disk space back above SLUICE_DISK_RESERVE: writes to the ${store} are accepted again`,
        );
    },
  });
}
