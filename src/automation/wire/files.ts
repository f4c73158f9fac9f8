// Reusable file pool shapes: upload (multipart or a storage-direct session), metadata, delete.

import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Body, Closed, FilePart, Nullable, Num, OneOf, Str } from './common.js';

const Purpose = OneOf(['run-input', 'builder-attachment'] as const, {
  description: '`run-input` and `builder-attachment` files are reaped after 24 hours.',
});

export const File = Closed(
  {
    id: Str(),
    filename: Str(),
    contentType: Nullable(Str()),
    size: Nullable(Num()),
    // A plain string on the way out (the request side is the two-value enum).
    purpose: Type.Optional(Nullable(Str('Lifecycle marker; omitted/null means a durable reusable file.'))),
    createdAt: Str(),
  },
  { $id: 'File' },
);
export type File = Static<typeof File>;

export const DeleteFileResponse = Closed({ deleted: Type.Boolean() }, { $id: 'DeleteFileResponse' });
export type DeleteFileResponse = Static<typeof DeleteFileResponse>;

export const PresignedFileUploadSession = Closed(
  {
    transport: Type.Literal('presigned-put'),
    uploadId: Str(),
    fileId: Str(),
    url: Str(),
    headers: Type.Record(Type.String(), Type.String()),
    expiresAt: Str(),
    maxFileSizeBytes: Num(),
  },
  { $id: 'PresignedFileUploadSession' },
);
export type PresignedFileUploadSession = Static<typeof PresignedFileUploadSession>;

export const MultipartFileUploadFallback = Closed(
  { transport: Type.Literal('multipart'), url: Str(), maxFileSizeBytes: Num() },
  { $id: 'MultipartFileUploadFallback' },
);
export type MultipartFileUploadFallback = Static<typeof MultipartFileUploadFallback>;

/** The 200 body of filesUploadsCreate; the SDK names it by its alias type. */
export const FilesUploadsCreateResponse = Type.Union(
  [PresignedFileUploadSession, MultipartFileUploadFallback],
  {
    $id: 'FilesUploadsCreateResponse',
  },
);
export type FilesUploadsCreateResponse = Static<typeof FilesUploadsCreateResponse>;

export const AbortFileUploadResponse = Closed(
  { aborted: Type.Literal(true) },
  { $id: 'AbortFileUploadResponse' },
);
export type AbortFileUploadResponse = Static<typeof AbortFileUploadResponse>;

export const CreateFileMultipartRequest = Body(
  { file: FilePart('Binary file field'), purpose: Type.Optional(Purpose) },
  { $id: 'CreateFileMultipartRequest' },
);
export type CreateFileMultipartRequest = Static<typeof CreateFileMultipartRequest>;

export const CreateFileUploadSessionRequest = Body(
  {
    filename: Str(),
    contentType: Str(),
    size: Num(),
    purpose: Type.Optional(Purpose),
    idempotencyKey: Type.Optional(Str()),
  },
  { $id: 'CreateFileUploadSessionRequest' },
);
export type CreateFileUploadSessionRequest = Static<typeof CreateFileUploadSessionRequest>;

export const FILE_SCHEMAS: readonly TSchema[] = [
  File,
  DeleteFileResponse,
  PresignedFileUploadSession,
  MultipartFileUploadFallback,
  FilesUploadsCreateResponse,
  AbortFileUploadResponse,
  CreateFileMultipartRequest,
  CreateFileUploadSessionRequest,
];
