// Dataset shapes: examples, their input and expected files, import/export and example runs.

import { Type, type Static, type TSchema } from '@sinclair/typebox';
import {
  AutomationType,
  Body,
  Closed,
  FilePart,
  Nullable,
  Num,
  OneOf,
  OpenRecord,
  Page,
  Str,
} from './common.js';

export const DatasetExample = Closed(
  {
    id: Str('Stable public example id.'),
    name: Str('Human-readable dataset example name.'),
    automationId: Str('Automation that owns this example.'),
    automationType: AutomationType,
    input: Nullable(OpenRecord(), { description: 'Input arguments used when this example is run.' }),
    // `unknown | null`: any JSON value, null included, but the field is always present.
    expected: Type.Unknown({ description: 'Expected JSON output for evaluator comparisons.' }),
    expectedFiles: Type.Array(
      Closed({
        name: Str('Expected file name.'),
        url: Type.Optional(Str('Download URL for the expected file.')),
      }),
    ),
    metadata: Nullable(OpenRecord(), { description: 'Caller-managed metadata.' }),
    annotation: Nullable(Str('Human note about the example.')),
    rowOrder: Nullable(Num('Optional display order within the dataset.')),
    overrides: Nullable(OpenRecord(), {
      description: 'Step output overrides used when running this example.',
    }),
    latestRunId: Nullable(Str('Most recent run id created from this example.')),
    createdAt: Type.Optional(Str()),
    updatedAt: Type.Optional(Nullable(Str())),
  },
  { $id: 'DatasetExample', description: 'One input/expected-output row in an automation dataset.' },
);
export type DatasetExample = Static<typeof DatasetExample>;

export const DatasetExampleList = Page(DatasetExample, 'DatasetExampleList');
export type DatasetExampleList = Static<typeof DatasetExampleList>;

const MutationFields = {
  name: Type.Optional(Nullable(Str('Example name. Required on create.'))),
  input: Type.Optional(Nullable(OpenRecord())),
  expected: Type.Optional(Type.Unknown({ description: 'Expected JSON output. Null clears it.' })),
  metadata: Type.Optional(Nullable(OpenRecord())),
  annotation: Type.Optional(Nullable(Str('Null clears the annotation.'))),
  rowOrder: Type.Optional(Nullable(Num('Null clears the order.'))),
  overrides: Type.Optional(Nullable(OpenRecord())),
};

// The SDK type marks `name` optional here although its description says create requires it;
// the type wins, so a missing name is the handler's error, not the schema's.
export const DatasetExampleMutation = Body(MutationFields, {
  $id: 'DatasetExampleMutation',
  description: 'Fields used to create or update a dataset example.',
});
export type DatasetExampleMutation = Static<typeof DatasetExampleMutation>;

export const DatasetExampleUpdate = Body(MutationFields, {
  $id: 'DatasetExampleUpdate',
  description: 'Partial update for a dataset example. Omitted fields are preserved.',
});
export type DatasetExampleUpdate = Static<typeof DatasetExampleUpdate>;

const FileList = (what: string, $id: string) =>
  Closed({ files: Type.Array(Str(), { description: `Paths under the example ${what} folder.` }) }, { $id });
const UploadResponse = (what: string, $id: string) =>
  Closed({ uploaded: Type.Array(Str(), { description: `Stored ${what} file paths.` }) }, { $id });
const RenameResponse = (what: string, $id: string) =>
  Closed({ ok: Type.Literal(true), filename: Str(), path: Str(`Updated ${what} file path.`) }, { $id });
const UploadRequest = (what: string, $id: string) =>
  Body({ file: Type.Array(FilePart(), { description: `One or more ${what} files to upload.` }) }, { $id });
const RenameRequest = ($id: string) =>
  Body({ newFilename: Str('New basename for the file. The parent folder is preserved.') }, { $id });

export const DatasetExampleExpectedFileList = FileList('expected', 'DatasetExampleExpectedFileList');
export type DatasetExampleExpectedFileList = Static<typeof DatasetExampleExpectedFileList>;
export const DatasetExampleExpectedFileUploadResponse = UploadResponse(
  'expected',
  'DatasetExampleExpectedFileUploadResponse',
);
export type DatasetExampleExpectedFileUploadResponse = Static<
  typeof DatasetExampleExpectedFileUploadResponse
>;
export const DatasetExampleExpectedFileRenameResponse = RenameResponse(
  'expected',
  'DatasetExampleExpectedFileRenameResponse',
);
export type DatasetExampleExpectedFileRenameResponse = Static<
  typeof DatasetExampleExpectedFileRenameResponse
>;
export const DatasetExampleExpectedFileUploadRequest = UploadRequest(
  'expected',
  'DatasetExampleExpectedFileUploadRequest',
);
export type DatasetExampleExpectedFileUploadRequest = Static<typeof DatasetExampleExpectedFileUploadRequest>;
export const DatasetExampleExpectedFileRenameRequest = RenameRequest(
  'DatasetExampleExpectedFileRenameRequest',
);
export type DatasetExampleExpectedFileRenameRequest = Static<typeof DatasetExampleExpectedFileRenameRequest>;

export const DatasetExampleInputFileList = FileList('input', 'DatasetExampleInputFileList');
export type DatasetExampleInputFileList = Static<typeof DatasetExampleInputFileList>;
export const DatasetExampleInputFileUploadResponse = UploadResponse(
  'input',
  'DatasetExampleInputFileUploadResponse',
);
export type DatasetExampleInputFileUploadResponse = Static<typeof DatasetExampleInputFileUploadResponse>;
export const DatasetExampleInputFileRenameResponse = RenameResponse(
  'input',
  'DatasetExampleInputFileRenameResponse',
);
export type DatasetExampleInputFileRenameResponse = Static<typeof DatasetExampleInputFileRenameResponse>;
export const DatasetExampleInputFileUploadRequest = UploadRequest(
  'input',
  'DatasetExampleInputFileUploadRequest',
);
export type DatasetExampleInputFileUploadRequest = Static<typeof DatasetExampleInputFileUploadRequest>;
export const DatasetExampleInputFileRenameRequest = RenameRequest('DatasetExampleInputFileRenameRequest');
export type DatasetExampleInputFileRenameRequest = Static<typeof DatasetExampleInputFileRenameRequest>;

export const AutomationDatasetImportMultipartRequest = Body(
  {
    file: FilePart('Dataset ZIP file'),
    mode: Type.Optional(
      OneOf(['append', 'replace'] as const, {
        description: '`append` adds examples; `replace` deletes the current dataset before importing.',
      }),
    ),
  },
  { $id: 'AutomationDatasetImportMultipartRequest' },
);
export type AutomationDatasetImportMultipartRequest = Static<typeof AutomationDatasetImportMultipartRequest>;

export const DatasetImportResponse = Type.Union(
  [
    Closed({
      mode: Type.Literal('append'),
      created: Num(),
      expectedSet: Num(),
      skipped: Num(),
      issues: Type.Array(Type.Unknown()),
    }),
    Closed({
      mode: Type.Literal('replace'),
      created: Num(),
      expectedSet: Num(),
      deleted: Num(),
      filesDeleted: Num(),
    }),
  ],
  { $id: 'DatasetImportResponse' },
);
export type DatasetImportResponse = Static<typeof DatasetImportResponse>;

export const ExampleRunResponse = Closed(
  {
    id: Str('Run id created for this example.'),
    type: OneOf(['workflow', 'agent'] as const),
    batchId: Nullable(Str('Experiment batch id when the run is associated with a batch.')),
    finished: Type.Literal(false),
  },
  { $id: 'ExampleRunResponse' },
);
export type ExampleRunResponse = Static<typeof ExampleRunResponse>;

export const DATASET_SCHEMAS: readonly TSchema[] = [
  DatasetExample,
  DatasetExampleList,
  DatasetExampleMutation,
  DatasetExampleUpdate,
  DatasetExampleExpectedFileList,
  DatasetExampleExpectedFileUploadResponse,
  DatasetExampleExpectedFileRenameResponse,
  DatasetExampleExpectedFileUploadRequest,
  DatasetExampleExpectedFileRenameRequest,
  DatasetExampleInputFileList,
  DatasetExampleInputFileUploadResponse,
  DatasetExampleInputFileRenameResponse,
  DatasetExampleInputFileUploadRequest,
  DatasetExampleInputFileRenameRequest,
  AutomationDatasetImportMultipartRequest,
  DatasetImportResponse,
  ExampleRunResponse,
];
