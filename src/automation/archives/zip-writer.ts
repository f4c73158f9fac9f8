// Writes a ZIP to a file entry by entry with fflate's streaming Zip (data descriptors, so no
// entry is held whole), reading each source file in fixed-size chunks. Fixed chunks keep the
// deflate output, and so the archive, identical for identical input. Runs in an archive worker.

import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { Zip, ZipDeflate, ZipPassThrough } from 'fflate';
import { checkRelativePath } from '../datasets/paths.js';
import { ArchiveRefusal, overLimit, refused, type ArchiveLimits } from './limits.js';

export interface BuildEntry {
  name: string;
  /** Bytes of the entry: a file to read, or small inline data (e.g. a JSON document). */
  file?: string;
  data?: Uint8Array;
  /** 0 stores (already compressed content), otherwise the deflate level. */
  level: 0 | 6;
}

const CHUNK = 64 * 1024;

/** Writes the archive to `out` (created new); returns its size. */
export function writeZip(
  out: string,
  entries: readonly BuildEntry[],
  mtime: number,
  limits: ArchiveLimits,
): number {
  if (entries.length > limits.maxEntries)
    throw new ArchiveRefusal(overLimit('maxEntries', limits, 'the archive would have'));
  // The service never hands a client an archive it would refuse itself.
  const unsafe = entries.filter((e) => checkRelativePath(e.name) !== undefined);
  if (unsafe.length > 0)
    throw new ArchiveRefusal(
      refused(
        unsafe.map((e) => ({
          field: e.name,
          message: `unsafe entry name ${JSON.stringify(e.name)}`,
          code: 'unsafe_path',
        })),
      ),
    );
  const fd = openSync(out, 'wx', 0o600);
  let size = 0;
  let total = 0;
  let failure: Error | undefined;
  try {
    const zip = new Zip((err, chunk) => {
      if (err) failure ??= err;
      else {
        writeSync(fd, chunk);
        size += chunk.length;
      }
    });
    const buf = Buffer.alloc(CHUNK);
    for (const entry of entries) {
      const item =
        entry.level === 0
          ? new ZipPassThrough(entry.name)
          : new ZipDeflate(entry.name, { level: entry.level });
      item.mtime = mtime;
      zip.add(item);
      const count = (n: number) => {
        total += n;
        // Files can grow between the check before the task and the read here.
        if (total > limits.maxUncompressedBytes)
          throw new ArchiveRefusal(overLimit('maxUncompressedBytes', limits, 'the archive would expand to'));
      };
      if (entry.file === undefined) {
        const data = entry.data ?? new Uint8Array(0);
        count(data.length);
        item.push(data, true);
        continue;
      }
      const src = openSync(entry.file, 'r');
      try {
        for (;;) {
          let n = 0;
          while (n < CHUNK) {
            const r = readSync(src, buf, n, CHUNK - n, null);
            if (r === 0) break;
            n += r;
          }
          count(n);
          const last = n < CHUNK;
          item.push(new Uint8Array(buf.subarray(0, n)), last);
          if (last) break;
        }
      } finally {
        closeSync(src);
      }
      if (failure) throw failure;
    }
    zip.end();
    if (failure) throw failure;
    return size;
  } finally {
    closeSync(fd);
  }
}
