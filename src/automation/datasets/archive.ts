// Dataset archives (ZIP), in the folder layout the product documents (its SDK's
// docs/evaluation.md and CLI dataset docs); there is no top-level manifest:
//   examples/<name>/input.json       the run input, a JSON object (required)
//   examples/<name>/input/<path>     input files, byte-exact, referenced as {"$file": "input/<path>"}
//   examples/<name>/expected.json    the expected output, a JSON object (absent: none)
//   examples/<name>/expected/<path>  expected files, byte-exact
//   examples/<name>/meta.json        optional: rowOrder, annotation, overrides; Sluice adds
//                                    name, metadata and contentTypes when they are not the defaults
// <name> is lowercase kebab/snake case. The archives of earlier Sluice versions
// (examples/<id>/example.json holding every field) are still read.
// Export is deterministic (sorted entries, fixed timestamps, no ids or times), so export → replace
// import → export gives the same bytes. The ZIP work itself (reading, checking, inflating, writing)
// runs in the archive workers (src/automation/archives/); this module knows only the layout.

import { posix } from 'node:path';
import type { Issue } from '../errors.js';
import { ArchiveRefusal, refused } from '../archives/limits.js';
import type { BuildEntry } from '../archives/zip-writer.js';
import { checkRelativePath, EXAMPLE_ID } from './paths.js';
import type { ExampleFolder, ExampleRecord } from './types.js';
import { exampleValueIssues, MAX_ANNOTATION_CHARS, MAX_NAME_CHARS } from './values.js';

export type { ArchiveLimits } from '../archives/limits.js';

/** 1980-01-01 (local time, as ZIP stores it) is the earliest time a ZIP entry can hold; a fixed value keeps exports identical. */
export const FIXED_MTIME = new Date(1980, 0, 1).getTime();

/** Example folder names of the layout (the product's convention). */
export const FOLDER_NAME = /^[a-z0-9][a-z0-9_-]{0,127}$/;

const FOLDERS = ['input', 'expected'] as const;

const TYPE_BY_EXTENSION: Record<string, string> = {
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  txt: 'text/plain',
  csv: 'text/csv',
  md: 'text/markdown',
  html: 'text/html',
  json: 'application/json',
  xml: 'application/xml',
  zip: 'application/zip',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
};

/** ZIP entries carry no content type: an imported file gets the one its extension suggests. */
export function guessContentType(path: string): string {
  const base = path.slice(path.lastIndexOf('/') + 1);
  const ext = base.includes('.') ? base.slice(base.lastIndexOf('.') + 1).toLowerCase() : '';
  return TYPE_BY_EXTENSION[ext] ?? 'application/octet-stream';
}

// ---------------------------------------------------------------------------------------------
// Export

const text = (value: unknown) => new TextEncoder().encode(JSON.stringify(value, null, 2) + '\n');

/** A folder name for an example name: lowercase, other characters as `-`, never empty. */
function slug(name: string): string {
  const s = name
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 100)
    .replace(/-+$/, '');
  return s === '' ? 'example' : s;
}

interface ExportDoc {
  example: ExampleRecord;
  input: unknown;
  expected: unknown;
}

/** meta.json of an example, or undefined when every field is the default. */
function metaOf(e: ExampleRecord, folder: string): Record<string, unknown> | undefined {
  const meta: Record<string, unknown> = {};
  if (e.rowOrder !== null) meta['rowOrder'] = e.rowOrder;
  if (e.annotation !== null) meta['annotation'] = e.annotation;
  if (e.overrides !== null) meta['overrides'] = e.overrides;
  if (e.name !== folder) meta['name'] = e.name;
  if (e.metadata !== null) meta['metadata'] = e.metadata;
  const types: Record<string, Record<string, string>> = {};
  for (const f of FOLDERS)
    for (const path of Object.keys(e.files[f]).sort()) {
      const type = e.files[f][path]!.contentType;
      if (type !== guessContentType(path)) (types[f] ??= {})[path] = type;
    }
  if (Object.keys(types).length > 0) meta['contentTypes'] = types;
  return Object.keys(meta).length > 0 ? meta : undefined;
}

/**
 * Folder names, one per example: its name when that is a valid, unused folder name, else a slug
 * of it with `-2`, `-3` … as needed. Examples are taken in an order that does not depend on ids
 * or times, so the names come out the same after a replace import.
 */
function assignFolders(docs: ExportDoc[]): Map<ExampleRecord, string> {
  const key = (d: ExportDoc) => JSON.stringify([d.input, d.expected]);
  const sorted = [...docs].sort((a, b) => {
    const ra = a.example.rowOrder ?? Number.POSITIVE_INFINITY;
    const rb = b.example.rowOrder ?? Number.POSITIVE_INFINITY;
    if (ra !== rb) return ra < rb ? -1 : 1;
    if (a.example.name !== b.example.name) return a.example.name < b.example.name ? -1 : 1;
    const ka = key(a);
    const kb = key(b);
    if (ka !== kb) return ka < kb ? -1 : 1;
    return a.example.id < b.example.id ? -1 : 1;
  });
  const used = new Set<string>();
  const out = new Map<ExampleRecord, string>();
  for (const { example } of sorted) {
    const base = FOLDER_NAME.test(example.name) ? example.name : slug(example.name);
    let name = base;
    for (let n = 2; used.has(name); n++) name = `${base}-${n}`;
    used.add(name);
    out.set(example, name);
  }
  return out;
}

/** The export's entries in archive order; file bytes are read from the blob store by the worker. */
export function datasetEntries(
  examples: readonly ExampleRecord[],
  blobPath: (sha256: string) => string,
): BuildEntry[] {
  const docs = examples.map((example) => ({
    example,
    input: example.input ?? {},
    expected: example.expected ?? null,
  }));
  const folders = assignFolders(docs);
  const ordered = docs
    .map((d) => ({ ...d, folder: folders.get(d.example)! }))
    .sort((a, b) => (a.folder < b.folder ? -1 : 1));
  const entries: BuildEntry[] = [];
  for (const { example, input, expected, folder } of ordered) {
    const dir = `examples/${folder}`;
    const json = (name: string, value: unknown) =>
      entries.push({ name: `${dir}/${name}`, data: text(value), level: 6 });
    json('input.json', input);
    if (expected !== null) json('expected.json', expected);
    const meta = metaOf(example, folder);
    if (meta) json('meta.json', meta);
    for (const f of FOLDERS)
      for (const path of Object.keys(example.files[f]).sort())
        entries.push({
          name: `${dir}/${f}/${path}`,
          file: blobPath(example.files[f][path]!.sha256),
          level: 6,
        });
  }
  return entries;
}

/** Bytes the export will read: known before any work from the stored sizes. */
export function datasetSize(examples: readonly ExampleRecord[]): number {
  let total = 0;
  for (const e of examples)
    for (const f of FOLDERS) for (const ref of Object.values(e.files[f])) total += ref.size;
  return total;
}

// ---------------------------------------------------------------------------------------------
// Import

/** An extracted archive file, written by the worker under the import's staging directory. */
export interface StagedFile {
  path: string;
  size: number;
}

/** One example read from an archive: its values, and its files still in the staging directory. */
export interface ParsedExample {
  /** Where it came from: `examples/<folder>`. */
  source: string;
  name: string;
  input: Record<string, unknown>;
  expected: Record<string, unknown> | null;
  metadata: Record<string, unknown> | null;
  annotation: string | null;
  /** undefined: the archive gives none (the importer numbers such examples in archive order). */
  rowOrder: number | null | undefined;
  overrides: Record<string, unknown> | null;
  contentTypes: Record<ExampleFolder, Record<string, string>>;
  files: Record<ExampleFolder, Record<string, StagedFile>>;
}

type Doc = 'input.json' | 'expected.json' | 'meta.json' | 'example.json';
export interface Placement {
  folder: string;
  kind: ExampleFolder | 'doc';
  /** The file's path inside its example folder, or the document's name. */
  path: string;
}

const ENTRY =
  /^examples\/([^/]+)\/(?:(input\.json|expected\.json|meta\.json|example\.json)|(input|expected)\/(.+))$/;

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
  placed: Map<string, Placement>;
} {
  const issues: Issue[] = [];
  const placed = new Map<string, Placement>();
  const issue = (field: string, message: string, code: string) =>
    issues.push({ field, message, code, severity: 'error' });
  for (const { name, isDirectory } of entries) {
    if (isDirectory) continue;
    if (name === 'manifest.json') {
      issue(
        name,
        'a top-level manifest.json is the legacy dataset layout: use examples/<name>/input.json (see the archive layout)',
        'legacy_layout',
      );
      continue;
    }
    const m = ENTRY.exec(name);
    if (!m) {
      issue(name, `unexpected entry ${JSON.stringify(name)} (see the archive layout)`, 'invalid_layout');
      continue;
    }
    const folder = m[1]!;
    if (!EXAMPLE_ID.test(folder)) {
      issue(name, `invalid example folder name ${JSON.stringify(folder)}`, 'invalid_value');
      continue;
    }
    if (m[2]) {
      placed.set(name, { folder, kind: 'doc', path: m[2] });
      continue;
    }
    const kind = m[3] as ExampleFolder;
    const root = posix.join('/examples', folder, kind);
    const target = posix.resolve(root, m[4]!);
    if (!target.startsWith(root + '/') || checkRelativePath(m[4]!) !== undefined) {
      issue(name, `entry ${JSON.stringify(name)} resolves outside examples/${folder}/${kind}`, 'unsafe_path');
      continue;
    }
    placed.set(name, { folder, kind, path: target.slice(root.length + 1) });
  }
  return { issues, placed };
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);
const objOrNull = (v: unknown): v is Record<string, unknown> | null => v === null || isObject(v);

interface Slot {
  docs: Partial<Record<Doc, string>>;
  files: Record<ExampleFolder, Record<string, StagedFile>>;
}

/** Reads one example folder; pushes its problems to `issues` and answers undefined when it has any. */
function parseFolder(
  folder: string,
  slot: Slot,
  readJson: (file: string) => Uint8Array,
  issues: Issue[],
): ParsedExample | undefined {
  const dir = `examples/${folder}`;
  const before = issues.length;
  const issue = (field: string, message: string, code = 'invalid_value') =>
    issues.push({ field, message, code, severity: 'error' });
  const read = (doc: Doc): { value?: unknown } => {
    const file = slot.docs[doc];
    if (file === undefined) return {};
    try {
      return { value: JSON.parse(Buffer.from(readJson(file)).toString('utf8')) as unknown };
    } catch (err) {
      issue(`${dir}/${doc}`, `${dir}/${doc} is not valid JSON: ${(err as Error).message}`, 'invalid_json');
      return {};
    }
  };
  /** Value issues of input.json / expected.json, with the document as the field. */
  const valueIssues = (key: 'input' | 'expected', value: unknown) => {
    for (const i of exampleValueIssues({ [key]: value }))
      issues.push({ ...i, field: `${dir}/${key}.json${i.field.slice(key.length)}` });
  };
  const legacy = slot.docs['example.json'] !== undefined;
  let fields: Record<string, unknown>;
  let metaField: string;
  if (legacy) {
    metaField = `${dir}/example.json`;
    for (const doc of ['input.json', 'expected.json', 'meta.json'] as const)
      if (slot.docs[doc] !== undefined)
        issue(`${dir}/${doc}`, `${dir} mixes example.json with ${doc}: use one layout`, 'invalid_layout');
    const { value } = read('example.json');
    if (value === undefined) return undefined;
    if (!isObject(value)) {
      issue(metaField, `${metaField} is not a JSON object`, 'invalid_json');
      return undefined;
    }
    fields = value;
    for (const i of exampleValueIssues({ input: fields['input'], expected: fields['expected'] }, metaField))
      issues.push(i);
  } else {
    metaField = `${dir}/meta.json`;
    if (!FOLDER_NAME.test(folder))
      issue(
        dir,
        `example folder ${JSON.stringify(folder)} must be lowercase kebab/snake case (${FOLDER_NAME.source})`,
      );
    if (slot.docs['input.json'] === undefined) {
      issue(
        `${dir}/input.json`,
        `${dir} has no input.json (archives use examples/<name>/input.json; legacy layouts with input/arguments.json or expected/output.json are not read)`,
        'missing',
      );
      return undefined;
    }
    const input = read('input.json');
    const expected = read('expected.json');
    const meta = read('meta.json');
    if (input.value !== undefined) valueIssues('input', input.value);
    if (expected.value !== undefined) valueIssues('expected', expected.value);
    if (meta.value !== undefined && !isObject(meta.value))
      issue(metaField, `${metaField} is not a JSON object`);
    fields = {
      ...(isObject(meta.value) ? meta.value : {}),
      input: input.value,
      expected: expected.value ?? null,
    };
    delete fields['id'];
  }
  const problems: string[] = [];
  if (legacy && fields['id'] !== undefined && fields['id'] !== folder)
    problems.push(`id ${JSON.stringify(fields['id'])} differs from the folder name`);
  const name = fields['name'];
  if (name !== undefined && (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME_CHARS))
    problems.push(`name must be a string of 1 to ${MAX_NAME_CHARS} characters`);
  if (fields['metadata'] !== undefined && !objOrNull(fields['metadata']))
    problems.push('metadata must be an object or null');
  if (fields['overrides'] !== undefined && !objOrNull(fields['overrides']))
    problems.push('overrides must be an object or null');
  const annotation = fields['annotation'];
  if (
    annotation !== undefined &&
    annotation !== null &&
    (typeof annotation !== 'string' || annotation.length > MAX_ANNOTATION_CHARS)
  )
    problems.push(`annotation must be a string of at most ${MAX_ANNOTATION_CHARS} characters, or null`);
  const rowOrder = fields['rowOrder'];
  if (
    rowOrder !== undefined &&
    rowOrder !== null &&
    !(typeof rowOrder === 'number' && Number.isFinite(rowOrder))
  )
    problems.push('rowOrder must be a number or null');
  const types = fields['contentTypes'];
  if (
    types !== undefined &&
    !(
      isObject(types) &&
      Object.values(types).every((t) => isObject(t) && Object.values(t).every((v) => typeof v === 'string'))
    )
  )
    problems.push('contentTypes must map input/expected to {path: content type}');
  for (const p of problems) issue(metaField, `${metaField}: ${p}`);
  if (issues.length > before) return undefined;

  const given = (types ?? {}) as Record<string, Record<string, string> | undefined>;
  const contentTypes: Record<ExampleFolder, Record<string, string>> = { input: {}, expected: {} };
  for (const f of FOLDERS)
    for (const path of Object.keys(slot.files[f]))
      contentTypes[f][path] = given[f]?.[path] ?? guessContentType(path);
  return {
    source: dir,
    name: typeof name === 'string' ? name : folder,
    input: (fields['input'] ?? {}) as Record<string, unknown>,
    expected: (fields['expected'] ?? null) as Record<string, unknown> | null,
    metadata: (fields['metadata'] ?? null) as Record<string, unknown> | null,
    annotation: (annotation ?? null) as string | null,
    rowOrder: rowOrder as number | null | undefined,
    overrides: (fields['overrides'] ?? null) as Record<string, unknown> | null,
    contentTypes,
    files: slot.files,
  };
}

/**
 * Builds the examples from the placed, extracted entries; `readJson` gives a JSON document's
 * bytes. Throws ArchiveRefusal (400) listing every problem found. Examples come in folder order.
 */
export function parseExamples(
  placed: Map<string, Placement>,
  staged: Map<string, StagedFile>,
  readJson: (file: string) => Uint8Array,
): ParsedExample[] {
  const issues: Issue[] = [];
  const byFolder = new Map<string, Slot>();
  for (const [name, place] of placed) {
    const file = staged.get(name)!;
    let slot = byFolder.get(place.folder);
    if (!slot) byFolder.set(place.folder, (slot = { docs: {}, files: { input: {}, expected: {} } }));
    if (place.kind === 'doc') slot.docs[place.path as Doc] = file.path;
    else slot.files[place.kind][place.path] = file;
  }
  const parsed: ParsedExample[] = [];
  for (const folder of [...byFolder.keys()].sort()) {
    const example = parseFolder(folder, byFolder.get(folder)!, readJson, issues);
    if (example) parsed.push(example);
  }
  if (issues.length > 0) throw new ArchiveRefusal(refused(issues));
  return parsed;
}
