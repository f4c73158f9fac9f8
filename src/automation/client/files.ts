// File values in run inputs and uploads. A file is sent as its own multipart part, never as
// base64 inside the JSON.

/** An explicit file: bytes plus the name and type the server should record. */
export interface NamedFile {
  name: string;
  data: Blob | Uint8Array | ArrayBuffer;
  contentType?: string;
}

/** The descriptor shape of the product's own SDK (`{ content, filename, mimeType }`), accepted as-is. */
export interface FileDescriptor {
  content: Blob | ArrayBuffer | ArrayBufferView;
  filename: string;
  mimeType?: string;
}

/** Anything the client sends as a file. A bare Uint8Array/Buffer takes its field name as file name. */
export type FileValue = Blob | Uint8Array | ArrayBuffer | NamedFile | FileDescriptor;

/** The JSON that replaces a file inside `input`: it names the multipart part holding the bytes. */
export interface FileReference {
  $file: string;
}

/** The JSON that replaces a file uploaded first (files.upload): the stored file's id. */
export interface FileIdReference {
  $fileId: string;
}

export interface FilePart {
  /** Multipart field name. */
  field: string;
  blob: Blob;
  filename: string;
  /** The reference object standing in the JSON; pointTo() rewrites it in place. */
  ref: Record<string, string>;
}

/** Makes a part's reference name an uploaded file (`{ "$fileId": id }`) instead of the part. */
export function pointTo(part: FilePart, fileId: string): void {
  delete part.ref['$file'];
  part.ref['$fileId'] = fileId;
}

const DEFAULT_TYPE = 'application/octet-stream';

const TYPES: Record<string, string> = {
  pdf: 'application/pdf',
  json: 'application/json',
  txt: 'text/plain',
  csv: 'text/csv',
  md: 'text/markdown',
  html: 'text/html',
  xml: 'application/xml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  zip: 'application/zip',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

/** A content type guessed from a file name's extension. */
export function guessContentType(filename: string): string {
  const dot = filename.lastIndexOf('.');
  if (dot < 0) return DEFAULT_TYPE;
  return TYPES[filename.slice(dot + 1).toLowerCase()] ?? DEFAULT_TYPE;
}

function isBytes(value: unknown): value is Blob | Uint8Array | ArrayBuffer {
  return value instanceof Blob || value instanceof Uint8Array || value instanceof ArrayBuffer;
}

function isNamedFile(value: unknown): value is NamedFile {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Partial<NamedFile>;
  // String data is not accepted here: `{ name, data: 'text' }` is an ordinary input object far
  // more often than a file. toFile() turns text into a Blob for callers who mean a file.
  return (
    typeof v.name === 'string' &&
    isBytes(v.data) &&
    Object.keys(value).every((k) => k === 'name' || k === 'data' || k === 'contentType')
  );
}

function isDescriptor(value: unknown): value is FileDescriptor {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Partial<FileDescriptor>;
  return (
    typeof v.filename === 'string' &&
    (v.content instanceof Blob || v.content instanceof ArrayBuffer || ArrayBuffer.isView(v.content))
  );
}

/** True for every value the client uploads as a file. */
export function isFileValue(value: unknown): value is FileValue {
  return isBytes(value) || isNamedFile(value) || isDescriptor(value);
}

/** Wraps bytes with a name (and type) so they upload as a named file. */
export function toFile(data: NamedFile['data'] | string, name: string, contentType?: string): NamedFile {
  const bytes = typeof data === 'string' ? new Blob([data]) : data;
  return contentType === undefined ? { name, data: bytes } : { name, data: bytes, contentType };
}

function copyView(view: ArrayBufferView): Uint8Array {
  // Copy into a fresh ArrayBuffer: Blob parts must not alias a SharedArrayBuffer or a pooled Buffer slab.
  const out = new Uint8Array(view.byteLength);
  out.set(new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
  return out;
}

/** Turns a file value into a Blob with its file name. `fallbackName` names anonymous bytes. */
export function toBlob(value: FileValue, fallbackName: string): { blob: Blob; filename: string } {
  if (value instanceof Blob) {
    const name =
      typeof (value as Partial<File>).name === 'string' && (value as File).name.length > 0
        ? (value as File).name
        : fallbackName;
    return { blob: value.type ? value : value.slice(0, value.size, guessContentType(name)), filename: name };
  }
  if (value instanceof Uint8Array || value instanceof ArrayBuffer) {
    const bytes = value instanceof ArrayBuffer ? new Uint8Array(value.slice(0)) : copyView(value);
    return { blob: new Blob([bytes], { type: guessContentType(fallbackName) }), filename: fallbackName };
  }
  if (isDescriptor(value)) {
    const type = value.mimeType ?? guessContentType(value.filename);
    const content = value.content;
    const blob =
      content instanceof Blob
        ? content.slice(0, content.size, type)
        : new Blob([content instanceof ArrayBuffer ? content.slice(0) : copyView(content)], { type });
    return { blob, filename: value.filename };
  }
  const type = value.contentType ?? guessContentType(value.name);
  const data = value.data;
  let blob: Blob;
  if (data instanceof Blob) blob = data.slice(0, data.size, type);
  else blob = new Blob([data instanceof ArrayBuffer ? data.slice(0) : copyView(data)], { type });
  return { blob, filename: value.name };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

export interface ExtractedFiles {
  /** The input with each file replaced by a `{ "$file": "<part name>" }` reference. */
  json: unknown;
  parts: FilePart[];
}

/**
 * Finds file values anywhere in `input` (objects and arrays, any depth). Each becomes a part named
 * `files.<path>`, where path joins object keys and array indexes with dots (`files.contract`,
 * `files.documents.0`), and the JSON keeps `{ "$file": "files.<path>" }` in its place. Top-level
 * files therefore use exactly the product's part names (`files.<fieldName>`).
 */
export function extractFiles(input: unknown): ExtractedFiles {
  const parts: FilePart[] = [];
  const seen = new Set<object>();
  const walk = (value: unknown, path: string[]): unknown => {
    if (isFileValue(value)) {
      const field = `files.${path.join('.')}`;
      const { blob, filename } = toBlob(value, path[path.length - 1] ?? 'file');
      const ref: Record<string, string> = { $file: field };
      parts.push({ field, blob, filename, ref });
      return ref;
    }
    if (Array.isArray(value) || isPlainObject(value)) {
      if (seen.has(value)) throw new TypeError(`input contains a cycle at ${path.join('.') || '<root>'}`);
      seen.add(value);
      const out = Array.isArray(value)
        ? value.map((item, index) => walk(item, [...path, String(index)]))
        : Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item, [...path, key])]));
      seen.delete(value);
      return out;
    }
    return value;
  };
  const json = walk(input, []);
  return { json, parts };
}
