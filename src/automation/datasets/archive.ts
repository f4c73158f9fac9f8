// Dataset archives (ZIP). Layout, with no top-level manifest:
//   examples/<exampleId>/example.json    the example's fields (see docs/automation.md)
//   examples/<exampleId>/input/<path>    input files, byte-exact
//   examples/<exampleId>/expected/<path> expected files, byte-exact
// Export is deterministic (sorted entries, fixed timestamps), so export → replace import →
// export gives the same bytes. The ZIP work itself (reading, checking, inflating, writing) runs
// in the archive workers (src/automation/archives/); this module knows only the dataset layout.

import { posix } from 'node:path';
import type { Issue } from '../errors.js';
import { ArchiveRefusal, refused } from '../archives/limits.js';
import type { BuildEntry } from '../archives/zip-writer.js';
import { exampleValueIssues } from './example.js';
import { checkRelativePath, EXAMPLE_ID } from './paths.js';
import type { ExampleFolder, ExampleRecord } from './types.js';

export type { ArchiveLimits } from '../archives/limits.js';

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

/** 1980-01-01 (local time, as ZIP stores it) is the earliest time a ZIP entry can hold; a fixed value keeps exports identical. */
export const FIXED_MTIME = new Date(1980, 0, 1).getTime();

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

/** The export's entries in archive order; file bytes are read from the blob store by the worker. */
export function datasetEntries(
  examples: readonly ExampleRecord[],
  blobPath: (sha256: string) => string,
): BuildEntry[] {
  const entries: BuildEntry[] = [];
  const sorted = [...examples].sort((a, b) => (a.id < b.id ? -1 : 1));
  for (const example of sorted) {
    const dir = `examples/${example.id}`;
    entries.push({
      name: `${dir}/example.json`,
      data: new TextEncoder().encode(JSON.stringify(toArchived(example), null, 2) + '\n'),
      level: 6,
    });
    for (const folder of ['input', 'expected'] as const)
      for (const path of Object.keys(example.files[folder]).sort())
        entries.push({
          name: `${dir}/${folder}/${path}`,
          file: blobPath(example.files[folder][path]!.sha256),
          level: 6,
        });
  }
  return entries;
}

/** Bytes the export will read: known before any work from the stored sizes. */
export function datasetSize(examples: readonly ExampleRecord[]): number {
  let total = 0;
  for (const e of examples)
    for (const folder of ['input', 'expected'] as const)
      for (const ref of Object.values(e.files[folder])) total += ref.size;
  return total;
}

/** An extracted archive file, written by the worker under the import's staging directory. */
export interface StagedFile {
  path: string;
  size: number;
}

export interface ParsedExample {
  example: ArchivedExample;
  files: Record<ExampleFolder, Record<string, StagedFile>>;
}

const ENTRY = /^examples\/([^/]+)\/(?:(example\.json)|(input|expected)\/(.+))$/;

export interface LayoutEntry {
  name: string;
  isDirectory: boolean;
}

/**
 * Where each entry of an import goes, from its (already safe) name. Every file target is resolved
 * against its example folder and refused unless it stays inside it: the names were checked
 * segment by segment already, this is the second, independent guard.
 */
export function placeEntries(entries: readonly LayoutEntry[]): {
  issues: Issue[];
  placed: Map<string, { id: string; folder: ExampleFolder | 'json'; path: string }>;
} {
  const issues: Issue[] = [];
  const placed = new Map<string, { id: string; folder: ExampleFolder | 'json'; path: string }>();
  for (const { name, isDirectory } of entries) {
    if (isDirectory) continue;
    const m = ENTRY.exec(name);
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
    if (m[2]) {
      placed.set(name, { id, folder: 'json', path: 'example.json' });
      continue;
    }
    const folder = m[3] as ExampleFolder;
    const root = posix.join('/examples', id, folder);
    const target = posix.resolve(root, m[4]!);
    if (!target.startsWith(root + '/') || checkRelativePath(m[4]!) !== undefined) {
      issues.push({
        field: name,
        message: `entry ${JSON.stringify(name)} resolves outside examples/${id}/${folder}`,
        code: 'unsafe_path',
      });
      continue;
    }
    placed.set(name, { id, folder, path: target.slice(root.length + 1) });
  }
  return { issues, placed };
}

function str(v: unknown): v is string {
  return typeof v === 'string';
}

function objOrNull(v: unknown): v is Record<string, unknown> | null {
  return v === null || (typeof v === 'object' && !Array.isArray(v));
}

/**
 * Builds the examples from the placed, extracted entries; `readJson` gives an example.json's
 * bytes. Throws ArchiveRefusal (400) listing every problem found.
 */
export function parseExamples(
  placed: Map<string, { id: string; folder: ExampleFolder | 'json'; path: string }>,
  staged: Map<string, StagedFile>,
  readJson: (file: string) => Uint8Array,
): ParsedExample[] {
  const issues: Issue[] = [];
  const byId = new Map<string, { json?: string; files: Record<ExampleFolder, Record<string, StagedFile>> }>();
  for (const [name, place] of placed) {
    const file = staged.get(name)!;
    let slot = byId.get(place.id);
    if (!slot) byId.set(place.id, (slot = { files: { input: {}, expected: {} } }));
    if (place.folder === 'json') slot.json = file.path;
    else slot.files[place.folder][place.path] = file;
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
      const v: unknown = JSON.parse(Buffer.from(readJson(slot.json)).toString('utf8'));
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
  if (issues.length > 0) throw new ArchiveRefusal(refused(issues));
  return parsed.sort((a, b) => (a.example.id < b.example.id ? -1 : 1));
}
