// Reads a RunStartBody from JSON or multipart/form-data. File values become staged temp files
// that the run service snapshots into the run; the caller removes the temps afterwards.

import { rm } from 'node:fs/promises';
import type { HttpRequest } from '../../core/http/index.js';
import { invalid, notFound } from '../errors.js';
import { writeTemp } from '../files/blobs.js';
import type { FileStore } from '../files/store.js';
import * as S from '../openapi/schemas.js';
import type { StagedInputFile } from '../runs/service.js';
import { isMultipart, parseMultipart } from './multipart.js';
import { validateBody } from './validate.js';
import { safeRelative } from '../executor/runtime/context.js';

export interface ParsedStart {
  target: string;
  input: unknown;
  files: StagedInputFile[];
  overrides: { steps?: Record<string, unknown> };
  metadata: Record<string, unknown>;
  /** Temp files to delete once the run holds its snapshot. */
  temps: string[];
}

interface Body {
  target: string;
  input?: unknown;
  files?: Record<string, FileValue | FileValue[]>;
  overrides?: { steps?: Record<string, unknown> };
  metadata?: Record<string, unknown>;
}
type FileValue = { $fileId: string } | { $inline: { filename: string; mimeType?: string; base64: string } };

function cleanName(name: string, field: string): string {
  try {
    return safeRelative(name).split(/[\\/]/).pop()!;
  } catch {
    throw invalid(`files.${field}`, `invalid file name ${JSON.stringify(name)}`);
  }
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

export async function parseRunStart(
  req: HttpRequest,
  deps: { files: FileStore; tmpDir: string; maxUploadBytes: number },
  tenant: string,
): Promise<ParsedStart> {
  const temps: string[] = [];
  const staged: StagedInputFile[] = [];
  // A field names the run's folder input/<field>/, so it must be one safe path segment:
  // `.` and `..` pass the character rule but would leave that folder.
  const fieldOk = (field: string) => {
    if (!/^[A-Za-z0-9_.-]{1,128}$/.test(field) || field === '.' || field === '..')
      throw invalid(
        'files',
        `invalid file field name ${JSON.stringify(field)}: 1 to 128 of A-Z a-z 0-9 _ . -, not . or ..`,
      );
    return field;
  };
  try {
    let body: Body;
    if (isMultipart(req)) {
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
      body = validateBody<Body>(S.RunStartBody, candidate);
      for (const f of form.files) {
        const field = fieldOk(
          f.fieldName.startsWith('files.') ? f.fieldName.slice('files.'.length) : f.fieldName,
        );
        staged.push({
          field,
          filename: cleanName(f.filename, field),
          contentType: f.contentType,
          size: f.stored.size,
          sha256: f.stored.sha256,
          blobPath: f.stored.path,
          fileId: null,
        });
      }
    } else {
      body = validateBody<Body>(S.RunStartBody, await req.json(['application/json']));
    }
    for (const [rawField, value] of Object.entries(body.files ?? {})) {
      const field = fieldOk(rawField);
      for (const item of Array.isArray(value) ? value : [value]) {
        if ('$fileId' in item) {
          const file = deps.files.get(tenant, item.$fileId);
          if (!file) throw notFound(`file ${JSON.stringify(item.$fileId)}`, `files.${field}`);
          staged.push({
            field,
            filename: cleanName(file.filename, field),
            contentType: file.contentType,
            size: file.size,
            sha256: file.sha256,
            blobPath: deps.files.blobs.pathOf(file.sha256),
            fileId: file.id,
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
            blobPath: temp.path,
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
      input: body.input ?? {},
      files: staged,
      overrides: body.overrides ?? {},
      metadata: body.metadata ?? {},
      temps,
    };
  } catch (err) {
    await Promise.all(temps.map((t) => rm(t, { force: true })));
    throw err;
  }
}
