// Dataset archives (ZIP). Layout, with no top-level manifest:
//   examples/<exampleId>/example.json    the example's fields (see docs/automation.md)
//   examples/<exampleId>/input/<path>    input files, byte-exact
//   examples/<exampleId>/expected/<path> expected files, byte-exact
// Export is deterministic (sorted entries, fixed timestamps), so export → replace import →
// export gives the same bytes. Import reads the archive defensively: entry names that could
// escape (zip-slip), too many entries, and declared or actual uncompressed sizes past the
// limits are refused before anything is stored.

import { Unzip, UnzipInflate, unzipSync, zipSync, type Zippable } from 'fflate';
import { ServiceError, type Issue } from '../errors.js';
import { exampleValueIssues } from './example.js';
import { checkRelativePath, EXAMPLE_ID } from './paths.js';
import type { ExampleFolder, ExampleRecord } from './types.js';

export interface ArchiveLimits {
  /** Compressed archive size. */
  maxBytes: number;
  /** Sum of uncompressed entry sizes. */
  maxUncompressedBytes: number;
  maxEntries: number;
}

/** The example.json of an archive entry: every field of the example except its file bytes. */
export interface ArchivedExample {
  id: string;
  name: string;
  input: unknown;
  expected: unknown;
  metadata: Record<string, unknown> | null;
  annotation: string | null;
  rowOrder: number;
  overrides: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
  /** Content types of the files, by folder and path (ZIP entries carry none). */
  contentTypes: Record<ExampleFolder, Record<string, string>>;
}

// 1980-01-01 is the earliest time a ZIP entry can hold; a fixed value keeps exports identical.
const FIXED_MTIME = new Date('1980-01-01T00:00:00Z');

export function toArchived(e: ExampleRecord): ArchivedExample {
  const types = (folder: ExampleFolder) =>
    Object.fromEntries(
      Object.keys(e.files[folder])
        .sort()
        .map((p) => [p, e.files[folder][p]!.contentType]),
    );
  return {
    id: e.id,
    name: e.name,
    input: e.input,
    expected: e.expected,
    metadata: e.metadata,
    annotation: e.annotation,
    rowOrder: e.rowOrder,
    overrides: e.overrides,
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
    contentTypes: { input: types('input'), expected: types('expected') },
  };
}

export function buildArchive(
  examples: readonly { example: ExampleRecord; files: Record<ExampleFolder, Record<string, Uint8Array>> }[],
): Uint8Array {
  const entries: Zippable = {};
  const sorted = [...examples].sort((a, b) => (a.example.id < b.example.id ? -1 : 1));
  for (const { example, files } of sorted) {
    const dir = `examples/${example.id}`;
    entries[`${dir}/example.json`] = [
      new TextEncoder().encode(JSON.stringify(toArchived(example), null, 2) + '\n'),
      { mtime: FIXED_MTIME },
    ];
    for (const folder of ['input', 'expected'] as const)
      for (const path of Object.keys(files[folder]).sort())
        entries[`${dir}/${folder}/${path}`] = [files[folder][path]!, { mtime: FIXED_MTIME }];
  }
  return zipSync(entries, { level: 6, mtime: FIXED_MTIME });
}

export interface ParsedExample {
  example: ArchivedExample;
  files: Record<ExampleFolder, Record<string, Uint8Array>>;
}

const bad = (issues: Issue[]) =>
  new ServiceError(400, 'invalid_archive', `invalid dataset archive: ${issues[0]?.message}`, issues);
const tooLarge = (message: string) =>
  new ServiceError(413, 'archive_too_large', message, [
    { field: 'file', message, code: 'archive_too_large' },
  ]);

/** Unzips with the limits enforced on the central directory's declared sizes and on the bytes inflated. */
function unzipBounded(data: Uint8Array, limits: ArchiveLimits): Map<string, Uint8Array> {
  if (data.length > limits.maxBytes) throw tooLarge(`archive is larger than ${limits.maxBytes} bytes`);
  let declared = 0;
  let entries = 0;
  const names: string[] = [];
  try {
    // The filter sees the central directory; returning false inflates nothing.
    unzipSync(data, {
      filter(file) {
        entries++;
        declared += file.originalSize;
        names.push(file.name);
        return false;
      },
    });
  } catch (err) {
    throw bad([
      {
        field: 'file',
        message: `not a readable ZIP archive: ${(err as Error).message}`,
        code: 'invalid_archive',
      },
    ]);
  }
  if (entries > limits.maxEntries) throw tooLarge(`archive has more than ${limits.maxEntries} entries`);
  if (declared > limits.maxUncompressedBytes)
    throw tooLarge(`archive expands to more than ${limits.maxUncompressedBytes} bytes`);
  const unsafe = names.filter((n) => !n.endsWith('/') && checkRelativePath(n) !== undefined);
  if (unsafe.length > 0)
    throw bad(
      unsafe.slice(0, 20).map((n) => ({
        field: n,
        message: `unsafe entry name ${JSON.stringify(n)}: ${checkRelativePath(n)}`,
        code: 'unsafe_path',
      })),
    );

  // Declared sizes can lie; count what inflating really produces and stop at the limit.
  const out = new Map<string, Uint8Array>();
  let actual = 0;
  let failure: ServiceError | undefined;
  const unzip = new Unzip((file) => {
    if (failure) return;
    const chunks: Uint8Array[] = [];
    file.ondata = (err, chunk, final) => {
      if (failure) return;
      if (err) {
        failure = bad([
          {
            field: file.name,
            message: `cannot inflate ${file.name}: ${err.message}`,
            code: 'invalid_archive',
          },
        ]);
        return;
      }
      actual += chunk.length;
      if (actual > limits.maxUncompressedBytes) {
        failure = tooLarge(`archive expands to more than ${limits.maxUncompressedBytes} bytes`);
        file.terminate();
        return;
      }
      chunks.push(chunk);
      if (final && !file.name.endsWith('/')) out.set(file.name, Buffer.concat(chunks));
    };
    file.start();
  });
  unzip.register(UnzipInflate);
  try {
    // Fed in slices so a bomb is stopped after a bounded amount of inflation.
    const step = 64 * 1024;
    for (let i = 0; i < data.length && !failure; i += step)
      unzip.push(data.subarray(i, Math.min(data.length, i + step)), i + step >= data.length);
  } catch (err) {
    failure ??= bad([
      {
        field: 'file',
        message: `not a readable ZIP archive: ${(err as Error).message}`,
        code: 'invalid_archive',
      },
    ]);
  }
  if (failure) throw failure;
  return out;
}

function str(v: unknown): v is string {
  return typeof v === 'string';
}

function objOrNull(v: unknown): v is Record<string, unknown> | null {
  return v === null || (typeof v === 'object' && !Array.isArray(v));
}

/** Reads and validates the whole archive; throws 400/413 with every problem found. */
export function parseArchive(data: Uint8Array, limits: ArchiveLimits): ParsedExample[] {
  const entries = unzipBounded(data, limits);
  const issues: Issue[] = [];
  const byId = new Map<
    string,
    { json?: Uint8Array; files: Record<ExampleFolder, Record<string, Uint8Array>> }
  >();
  for (const [name, bytes] of entries) {
    const m = /^examples\/([^/]+)\/(?:(example\.json)|(input|expected)\/(.+))$/.exec(name);
    if (!m) {
      issues.push({
        field: name,
        message: `unexpected entry ${JSON.stringify(name)} (see the archive layout)`,
        code: 'invalid_layout',
      });
      continue;
    }
    const id = m[1]!;
    if (!EXAMPLE_ID.test(id)) {
      issues.push({
        field: name,
        message: `invalid example id ${JSON.stringify(id)}`,
        code: 'invalid_value',
      });
      continue;
    }
    let slot = byId.get(id);
    if (!slot) byId.set(id, (slot = { files: { input: {}, expected: {} } }));
    if (m[2]) slot.json = bytes;
    else slot.files[m[3] as ExampleFolder][m[4]!] = bytes;
  }
  const parsed: ParsedExample[] = [];
  for (const [id, slot] of byId) {
    const field = `examples/${id}/example.json`;
    if (!slot.json) {
      issues.push({ field, message: `example ${id} has no example.json`, code: 'missing' });
      continue;
    }
    let doc: Record<string, unknown>;
    try {
      const v: unknown = JSON.parse(Buffer.from(slot.json).toString('utf8'));
      if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error('not a JSON object');
      doc = v as Record<string, unknown>;
    } catch (err) {
      issues.push({
        field,
        message: `${field} is not a JSON object: ${(err as Error).message}`,
        code: 'invalid_json',
      });
      continue;
    }
    const problems: string[] = [];
    if (doc['id'] !== undefined && doc['id'] !== id)
      problems.push(`id ${JSON.stringify(doc['id'])} differs from the folder name`);
    if (doc['name'] !== undefined && !str(doc['name'])) problems.push('name must be a string');
    if (doc['metadata'] !== undefined && !objOrNull(doc['metadata']))
      problems.push('metadata must be an object or null');
    if (doc['overrides'] !== undefined && !objOrNull(doc['overrides']))
      problems.push('overrides must be an object or null');
    if (doc['annotation'] !== undefined && doc['annotation'] !== null && !str(doc['annotation']))
      problems.push('annotation must be a string or null');
    if (doc['rowOrder'] !== undefined && !Number.isInteger(doc['rowOrder']))
      problems.push('rowOrder must be an integer');
    for (const t of ['createdAt', 'updatedAt'])
      if (doc[t] !== undefined && !(str(doc[t]) && Number.isFinite(Date.parse(doc[t]))))
        problems.push(`${t} must be an ISO date`);
    for (const p of problems) issues.push({ field, message: `${field}: ${p}`, code: 'invalid_value' });
    const valueIssues = exampleValueIssues(doc, field);
    issues.push(...valueIssues);
    if (problems.length > 0 || valueIssues.length > 0) continue;
    const ct = (doc['contentTypes'] ?? {}) as Record<string, Record<string, unknown> | undefined>;
    const contentTypes: Record<ExampleFolder, Record<string, string>> = { input: {}, expected: {} };
    for (const folder of ['input', 'expected'] as const)
      for (const path of Object.keys(slot.files[folder])) {
        const t = ct[folder]?.[path];
        contentTypes[folder][path] = str(t) ? t : 'application/octet-stream';
      }
    const now = new Date().toISOString();
    parsed.push({
      example: {
        id,
        name: str(doc['name']) ? doc['name'] : id,
        input: doc['input'] ?? {},
        expected: doc['expected'] ?? null,
        metadata: (doc['metadata'] as Record<string, unknown> | null | undefined) ?? null,
        annotation: (doc['annotation'] as string | null | undefined) ?? null,
        rowOrder: (doc['rowOrder'] as number | undefined) ?? -1,
        overrides: (doc['overrides'] as Record<string, unknown> | null | undefined) ?? null,
        createdAt: (doc['createdAt'] as string | undefined) ?? now,
        updatedAt: (doc['updatedAt'] as string | undefined) ?? now,
        contentTypes,
      },
      files: slot.files,
    });
  }
  if (issues.length > 0) throw bad(issues.slice(0, 50));
  return parsed.sort((a, b) => (a.example.id < b.example.id ? -1 : 1));
}
