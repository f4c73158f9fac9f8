// A strict ZIP reader for untrusted archives, run in an archive worker (synchronous file I/O is
// fine there). The layout follows PKWARE's APPNOTE.TXT (sections 4.3.6 to 4.3.16):
//   [local header, data, optional data descriptor]* central directory, end of central directory.
// A ZIP names every entry twice: in the central directory and in the local header before its
// data. Readers that list one and extract by the other can be fooled into writing a name nobody
// checked, so this reader takes every name from the central directory and refuses an archive
// whose local headers disagree with it (name, method, sizes, CRC). It also refuses what an
// import has no use for and what is only there to attack a reader: ZIP64, encryption, methods
// other than stored/deflate, overlapping entries (the "better zip bomb"), symlinks and other
// special files (Unix mode in the external attributes), duplicate names and unsafe names.

import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { Inflate } from 'fflate';
import { checkRelativePath } from '../datasets/paths.js';
import { ArchiveRefusal, overLimit, refused, type ArchiveLimits } from './limits.js';

export interface ZipEntry {
  /** Position in the central directory. */
  index: number;
  /** From the central directory, equal byte for byte to the local header's. */
  name: string;
  isDirectory: boolean;
  method: 0 | 8;
  crc: number;
  compressedSize: number;
  size: number;
  dataStart: number;
}

type Issue = { field: string; message: string; code: string };

const SIG_LOCAL = 0x04034b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_END = 0x06054b50;
const SIG_DESCRIPTOR = 0x08074b50;
const SIG_ZIP64_LOCATOR = 0x07064b50;
const FLAG_ENCRYPTED = 0x0001;
const FLAG_DESCRIPTOR = 0x0008;
const FLAG_STRONG_ENCRYPTION = 0x0040;
const FLAG_MASKED_DIRECTORY = 0x2000;
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
// Compressed bytes read at a time: deflate expands at most about 1032:1, so one step of a
// bomb stays near 16 MiB before the size check stops it.
const CHUNK = 16 * 1024;

const utf8 = new TextDecoder('utf-8', { fatal: true });
const fail = (issues: Issue[]): never => {
  throw new ArchiveRefusal(refused(issues));
};
const unreadable = (message: string): never =>
  fail([{ field: 'file', message: `not a readable ZIP archive: ${message}`, code: 'invalid_archive' }]);

function readAt(fd: number, position: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buf, done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  if (done < length) unreadable(`truncated at byte ${position + done}`);
  return buf;
}

function findEnd(fd: number, fileSize: number): { at: number; record: Buffer } {
  if (fileSize < 22) unreadable('too short to be a ZIP archive');
  const tailLength = Math.min(fileSize, 22 + 0xffff);
  const tail = readAt(fd, fileSize - tailLength, tailLength);
  // The end record may be followed by a comment; take the last signature whose comment length
  // reaches exactly the end of the file.
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === SIG_END && i + 22 + tail.readUInt16LE(i + 20) === tail.length) {
      const at = fileSize - tailLength + i;
      if (i >= 20 && tail.readUInt32LE(i - 20) === SIG_ZIP64_LOCATOR)
        fail([{ field: 'file', message: 'ZIP64 archives are not accepted', code: 'unsupported_archive' }]);
      return { at, record: tail.subarray(i, i + 22) };
    }
  }
  return unreadable('no end of central directory record');
}

function entryType(externalAttrs: number): 'file' | 'directory' | 'symlink' | 'special' | 'unset' {
  const mode = externalAttrs >>> 16;
  const type = mode & S_IFMT;
  if (mode === 0 || type === 0) return 'unset';
  if (type === S_IFREG) return 'file';
  if (type === S_IFDIR) return 'directory';
  if (type === S_IFLNK) return 'symlink';
  return 'special';
}

/**
 * Reads and checks the directory of the archive open at `fd`. Throws ArchiveRefusal (400 or 413)
 * before any entry is inflated.
 */
export function readZipDirectory(fd: number, fileSize: number, limits: ArchiveLimits): ZipEntry[] {
  if (fileSize > limits.maxBytes) throw new ArchiveRefusal(overLimit('maxBytes', limits, 'the archive has'));
  const { at: endAt, record } = findEnd(fd, fileSize);
  const count = record.readUInt16LE(10);
  const dirSize = record.readUInt32LE(12);
  const dirOffset = record.readUInt32LE(16);
  if (record.readUInt16LE(4) !== 0 || record.readUInt16LE(6) !== 0 || record.readUInt16LE(8) !== count)
    fail([{ field: 'file', message: 'multi-volume archives are not accepted', code: 'unsupported_archive' }]);
  if (count === 0xffff || dirSize === 0xffffffff || dirOffset === 0xffffffff)
    fail([{ field: 'file', message: 'ZIP64 archives are not accepted', code: 'unsupported_archive' }]);
  if (count > limits.maxEntries) throw new ArchiveRefusal(overLimit('maxEntries', limits, 'the archive has'));
  if (dirOffset + dirSize !== endAt)
    unreadable('the central directory is not where the end record says (data before or after it)');
  const dir = readAt(fd, dirOffset, dirSize);

  const issues: Issue[] = [];
  const entries: (ZipEntry & { flags: number; end: number; localSize: number; localOffset: number })[] = [];
  const seen = new Set<string>();
  let p = 0;
  for (let index = 0; index < count; index++) {
    if (p + 46 > dir.length || dir.readUInt32LE(p) !== SIG_CENTRAL)
      unreadable(`central directory record ${index} is damaged`);
    const flags = dir.readUInt16LE(p + 8);
    const method = dir.readUInt16LE(p + 10);
    const crc = dir.readUInt32LE(p + 16);
    const compressedSize = dir.readUInt32LE(p + 20);
    const size = dir.readUInt32LE(p + 24);
    const nameLength = dir.readUInt16LE(p + 28);
    const extraLength = dir.readUInt16LE(p + 30);
    const commentLength = dir.readUInt16LE(p + 32);
    const externalAttrs = dir.readUInt32LE(p + 38);
    const localOffset = dir.readUInt32LE(p + 42);
    const next = p + 46 + nameLength + extraLength + commentLength;
    if (next > dir.length) unreadable(`central directory record ${index} is damaged`);
    const nameBytes = dir.subarray(p + 46, p + 46 + nameLength);
    p = next;

    let name: string;
    try {
      name = utf8.decode(nameBytes);
    } catch {
      issues.push({
        field: `entry ${index}`,
        message: `entry ${index} has a name that is not UTF-8`,
        code: 'unsafe_path',
      });
      continue;
    }
    const field = name;
    const isDirectory = name.endsWith('/');
    const problem = checkRelativePath(isDirectory ? name.slice(0, -1) : name);
    if (problem) {
      issues.push({
        field,
        message: `unsafe entry name ${JSON.stringify(name)}: ${problem}`,
        code: 'unsafe_path',
      });
      continue;
    }
    if (seen.has(name)) {
      issues.push({
        field,
        message: `two entries are named ${JSON.stringify(name)}`,
        code: 'duplicate_entry',
      });
      continue;
    }
    seen.add(name);
    const type = entryType(externalAttrs);
    if (type === 'symlink' || type === 'special') {
      issues.push({
        field,
        message: `${name} is a ${type === 'symlink' ? 'symbolic link' : 'special file'}; only regular files are accepted`,
        code: type === 'symlink' ? 'symlink_entry' : 'unsupported_entry',
      });
      continue;
    }
    if (flags & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION | FLAG_MASKED_DIRECTORY)) {
      issues.push({ field, message: `${name} is encrypted`, code: 'unsupported_entry' });
      continue;
    }
    if (method !== 0 && method !== 8) {
      issues.push({
        field,
        message: `${name} uses compression method ${method} (only stored and deflate)`,
        code: 'unsupported_entry',
      });
      continue;
    }
    if (method === 0 && compressedSize !== size) {
      issues.push({ field, message: `${name} is stored but its sizes differ`, code: 'size_mismatch' });
      continue;
    }
    if (isDirectory && size !== 0) {
      issues.push({ field, message: `directory entry ${name} holds data`, code: 'unsupported_entry' });
      continue;
    }

    // The local header must say the same thing as the central directory.
    if (localOffset + 30 > dirOffset) unreadable(`the local header of ${name} is outside the archive`);
    const local = readAt(fd, localOffset, 30);
    if (local.readUInt32LE(0) !== SIG_LOCAL) unreadable(`the local header of ${name} is missing`);
    const localNameLength = local.readUInt16LE(26);
    const localExtraLength = local.readUInt16LE(28);
    const dataStart = localOffset + 30 + localNameLength + localExtraLength;
    if (dataStart > dirOffset) unreadable(`the local header of ${name} runs past the entries`);
    const localName = readAt(fd, localOffset + 30, localNameLength);
    const localFlags = local.readUInt16LE(6);
    const localCrc = local.readUInt32LE(14);
    const localCompressed = local.readUInt32LE(18);
    const localSize = local.readUInt32LE(22);
    let end = dataStart + compressedSize;
    const entry = {
      index,
      name,
      isDirectory,
      method: method === 0 ? (0 as const) : (8 as const),
      crc,
      compressedSize,
      size,
      dataStart,
      flags,
      end,
      localSize,
      localOffset,
    };
    entries.push(entry);
    if (!localName.equals(nameBytes)) {
      issues.push({
        field,
        message: `the local header names ${JSON.stringify(localName.toString('latin1'))}, the central directory ${JSON.stringify(name)}`,
        code: 'name_mismatch',
      });
      continue;
    }
    const mismatch: string[] = [];
    if (local.readUInt16LE(8) !== method) mismatch.push('compression method');
    if ((localFlags & FLAG_DESCRIPTOR) !== (flags & FLAG_DESCRIPTOR)) mismatch.push('data descriptor flag');
    // With a data descriptor the local header may leave CRC and sizes at zero (APPNOTE 4.4.4).
    const deferred = (flags & FLAG_DESCRIPTOR) !== 0;
    const agrees = (localValue: number, central: number) =>
      localValue === central || (deferred && localValue === 0);
    if (!agrees(localCrc, crc)) mismatch.push('CRC-32');
    if (!agrees(localCompressed, compressedSize)) mismatch.push('compressed size');
    if (!agrees(localSize, size)) mismatch.push('size');
    if (deferred && end + 12 <= dirOffset) {
      const d = readAt(fd, end, 16);
      const o = d.readUInt32LE(0) === SIG_DESCRIPTOR ? 4 : 0;
      if (
        d.readUInt32LE(o) !== crc ||
        d.readUInt32LE(o + 4) !== compressedSize ||
        d.readUInt32LE(o + 8) !== size
      )
        mismatch.push('data descriptor');
      end += o + 12;
      entry.end = end;
    }
    if (mismatch.length > 0)
      issues.push({
        field,
        message: `the local header of ${name} disagrees with the central directory (${mismatch.join(', ')})`,
        code: 'header_mismatch',
      });
  }
  if (p !== dir.length) unreadable('the central directory holds more than its records');

  // Both headers' sizes count: a lie in either one is bounded before anything is inflated.
  let declared = 0;
  for (const e of entries) declared += Math.max(e.size, e.localSize);
  if (declared > limits.maxUncompressedBytes)
    throw new ArchiveRefusal(overLimit('maxUncompressedBytes', limits, 'the archive expands to'));
  if (issues.length > 0) fail(issues);

  // Entries may not share bytes: overlapping entries let a small archive inflate the same data
  // many times over.
  const byOffset = [...entries].sort((a, b) => a.localOffset - b.localOffset);
  for (let i = 0; i < byOffset.length; i++) {
    const limit = i + 1 < byOffset.length ? byOffset[i + 1]!.localOffset : dirOffset;
    if (byOffset[i]!.end > limit)
      fail([
        {
          field: byOffset[i]!.name,
          message: `${byOffset[i]!.name} overlaps another entry`,
          code: 'overlapping_entries',
        },
      ]);
  }
  return entries.map(({ index, name, isDirectory, method, crc, compressedSize, size, dataStart }) => ({
    index,
    name,
    isDirectory,
    method,
    crc,
    compressedSize,
    size,
    dataStart,
  }));
}

/**
 * Inflates one entry into `outPath` (created new), checking the bytes against the declared size
 * and CRC-32: no entry can write more than the central directory declared.
 */
export function extractEntry(fd: number, entry: ZipEntry, outPath: string): void {
  const out = openSync(outPath, 'wx', 0o600);
  try {
    let written = 0;
    let crc = 0;
    let problem: { message: string; code: string } | undefined;
    const sink = (chunk: Uint8Array) => {
      if (problem) return;
      written += chunk.length;
      if (written > entry.size) {
        problem = { message: 'inflates past its declared size', code: 'size_mismatch' };
        return;
      }
      crc = crc32(chunk, crc);
      writeSync(out, chunk);
    };
    const inflate = entry.method === 8 ? new Inflate((chunk) => sink(chunk)) : undefined;
    let position = entry.dataStart;
    const end = entry.dataStart + entry.compressedSize;
    const buf = Buffer.alloc(CHUNK);
    try {
      if (position === end) inflate?.push(new Uint8Array(0), true);
      while (position < end && !problem) {
        const length = Math.min(CHUNK, end - position);
        const n = readSync(fd, buf, 0, length, position);
        if (n === 0) unreadable(`${entry.name} is truncated`);
        position += n;
        const chunk = new Uint8Array(buf.subarray(0, n));
        if (inflate) inflate.push(chunk, position === end);
        else sink(chunk);
      }
    } catch (err) {
      if (err instanceof ArchiveRefusal) throw err;
      fail([
        {
          field: entry.name,
          message: `${entry.name} cannot be inflated (${(err as Error).message})`,
          code: 'invalid_archive',
        },
      ]);
    }
    if (!problem && written !== entry.size)
      problem = { message: `holds ${written} bytes, not the ${entry.size} declared`, code: 'size_mismatch' };
    if (!problem && crc >>> 0 !== entry.crc)
      problem = { message: 'fails its CRC-32 check', code: 'crc_mismatch' };
    if (problem)
      fail([{ field: entry.name, message: `${entry.name} ${problem.message}`, code: problem.code }]);
  } finally {
    closeSync(out);
  }
}

export function openArchive(path: string): number {
  return openSync(path, 'r');
}
