// The run start body as a run request: JSON (validated by the route contract) or multipart/form-data
// (read here), with its input files staged for the run service to snapshot. File bytes sent in
// the request (multipart parts, `$inline` base64) go to temp files the caller removes once the
// run holds its snapshot; `$fileId` references name stored files and are snapshotted from there.
//
// Files reach a run in three ways, all ending as input/<field>/<filename> in the run's folder:
//   - multipart parts `files.<field>` (the SDK's client.run for small files),
//   - `files: {<field>: {$fileId} | {$inline} | [...]}` in the body,
//   - a top-level input value `{"$fileId": "file_…"}`: how the SDK's client.run passes a file it
//     uploaded first because it was above its multipart limit (src/client.ts, prepareRunFileInputs).
//     Such a value is taken out of `input` and becomes a file of that field, as a multipart part would.

import { rm } from 'node:fs/promises';
import type { HttpRequest } from '../../core/http/index.js';
import { invalid, notFound } from '../errors.js';
import { writeTemp } from '../files/blobs.js';
import { isMultipart, parseMultipart } from '../http/multipart.js';
import { idProblem } from '../http/ids.js';
import { validateFields } from '../http/route.js';
import { safeRelative } from '../executor/runtime/context.js';
import type { FileRef, RunStartRequest } from './schemas.js';
import { RunStartRequest as RunStartSchema } from './schemas.js';
import type { StagedInputFile } from './service.js';

/** A stored, reusable file as the intake needs it (the file store's records); its bytes are the blob of its sha256. */
export interface StoredFile {
  filename: string;
  contentType: string;
  size: number;
  sha256: string;
}

export interface IntakeDeps {
  /** The caller's stored file, or undefined (unknown, or another tenant's). */
  file(tenant: string, id: string): Promise<StoredFile | undefined>;
  tmpDir: string;
  maxUploadBytes: number;
}

export interface ParsedStart {
  target: string;
  input: Record<string, unknown>;
  files: StagedInputFile[];
  overrides: { steps?: Record<string, unknown> };
  metadata: Record<string, unknown>;
  /** Temp files to delete once the run holds its snapshot (see discard). */
  temps: string[];
}

export async function discard(parsed: Pick<ParsedStart, 'temps'>): Promise<void> {
  await Promise.all(parsed.temps.map((t) => rm(t, { force: true })));
}

function cleanName(name: string, field: string): string {
  try {
    return safeRelative(name).split(/[\\/]/).pop()!;
  } catch {
    throw invalid(`files.${field}`, `invalid file name ${JSON.stringify(name)}`);
  }
}

// A field names the run's folder input/<field>/, so it must be one safe path segment:
// `.` and `..` pass the character rule but would leave that folder.
function fieldName(field: string, where: string): string {
  if (!/^[A-Za-z0-9_.-]{1,128}$/.test(field) || field === '.' || field === '..')
    throw invalid(
      where,
      `invalid file field name ${JSON.stringify(field)}: 1 to 128 of A-Z a-z 0-9 _ . -, not . or ..`,
    );
  return field;
}

function jsonField(fields: Record<string, string>, name: string): unknown {
  const text = fields[name];
  if (text === undefined || text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw invalid(name, `form field ${name} must hold JSON`);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `{$fileId: "…"}` exactly (one key): a file reference in place of an input value. */
function fileIdRef(value: unknown): { $fileId: string } | undefined {
  if (!isObject(value)) return undefined;
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === '$fileId' && typeof value['$fileId'] === 'string'
    ? { $fileId: value['$fileId'] }
    : undefined;
}

/** Moves top-level `{$fileId}` input values (or lists of them) into per-field file references. */
function splitInput(input: Record<string, unknown>): {
  args: Record<string, unknown>;
  refs: [string, FileRef[]][];
} {
  const args: Record<string, unknown> = {};
  const refs: [string, FileRef[]][] = [];
  for (const [key, value] of Object.entries(input)) {
    const found = Array.isArray(value) && value.length > 0 ? value.map(fileIdRef) : [fileIdRef(value)];
    const list = found.filter((r) => r !== undefined);
    if (list.length === found.length) {
      for (const r of list)
        if (idProblem(r.$fileId))
          throw invalid(
            `input.${key}.$fileId`,
            `input.${key}: ${JSON.stringify(r.$fileId)} is not a file id`,
          );
      refs.push([fieldName(key, `input.${key}`), list]);
    } else args[key] = value;
  }
  return { args, refs };
}

/**
 * The run request of a start call. `body` is the JSON body the route validated, or undefined for
 * multipart/form-data, which is read here.
 */
export async function readRunStart(
  req: HttpRequest,
  body: RunStartRequest | undefined,
  deps: IntakeDeps,
  tenant: string,
): Promise<ParsedStart> {
  const temps: string[] = [];
  const staged: StagedInputFile[] = [];
  try {
    if (body === undefined) {
      if (!isMultipart(req)) throw invalid('<root>', 'a run start needs a JSON or multipart/form-data body');
      const form = await parseMultipart(
        req,
        { fileBytes: deps.maxUploadBytes, files: 100, fieldBytes: 8 * 1024 * 1024 },
        (source, limit) => writeTemp(deps.tmpDir, source, limit),
        (t) => rm(t.path, { force: true }),
      );
      for (const f of form.files) temps.push(f.stored.path);
      const candidate: Record<string, unknown> = { target: form.fields['target'] };
      for (const key of ['input', 'overrides', 'metadata', 'files'] as const) {
        const v = jsonField(form.fields, key);
        if (v !== undefined) candidate[key] = v;
      }
      // The multipart fields, once read, are checked against the same schema as a JSON body.
      body = validateFields(RunStartSchema, candidate);
      for (const f of form.files) {
        const raw = f.fieldName.startsWith('files.') ? f.fieldName.slice('files.'.length) : f.fieldName;
        const field = fieldName(raw, 'files');
        staged.push({
          field,
          filename: cleanName(f.filename, field),
          contentType: f.contentType,
          size: f.stored.size,
          sha256: f.stored.sha256,
          source: { path: f.stored.path },
          fileId: null,
        });
      }
    }
    const { args, refs } = splitInput(body.input ?? {});
    const named: [string, FileRef[]][] = Object.entries(body.files ?? {}).map(([field, v]) => [
      fieldName(field, 'files'),
      Array.isArray(v) ? v : [v],
    ]);
    for (const [field, items] of [...named, ...refs]) {
      for (const item of items) {
        if ('$fileId' in item) {
          const file = await deps.file(tenant, item.$fileId);
          if (!file) throw notFound(`file ${JSON.stringify(item.$fileId)}`, `files.${field}`);
          staged.push({
            field,
            filename: cleanName(file.filename, field),
            contentType: file.contentType,
            size: file.size,
            sha256: file.sha256,
            source: 'blob',
            fileId: item.$fileId,
          });
        } else {
          const data = Buffer.from(item.$inline.base64, 'base64');
          const temp = await writeTemp(
            deps.tmpDir,
            (async function* () {
              yield data;
            })(),
            deps.maxUploadBytes,
          );
          temps.push(temp.path);
          staged.push({
            field,
            filename: cleanName(item.$inline.filename, field),
            contentType: item.$inline.mimeType ?? 'application/octet-stream',
            size: temp.size,
            sha256: temp.sha256,
            source: { path: temp.path },
            fileId: null,
          });
        }
      }
    }
    const names = new Set<string>();
    for (const s of staged) {
      const key = `${s.field}/${s.filename}`;
      if (names.has(key))
        throw invalid(`files.${s.field}`, `two files named ${s.filename} in field ${s.field}`);
      names.add(key);
    }
    return {
      target: body.target,
      input: args,
      files: staged,
      overrides: body.overrides ?? {},
      metadata: body.metadata ?? {},
      temps,
    };
  } catch (err) {
    await discard({ temps });
    throw err;
  }
}
