// Request schemas of the /runs routes: the query names the product SDK sends (camelCase, except
// `wait_for_completion`; http/validate.ts folds snake_case onto them too) and the run start body.
// They follow the SDK's RunStartBody / RunsListData but bound every identifier (http/ids.ts),
// so an oversized or unsafe id is a 400 before it reaches an LMDB key or a folder name.

import { Type, type Static, type TSchema } from '@sinclair/typebox';
import {
  IdListString,
  IdString,
  MAX_CURSOR_CHARS,
  MAX_REF_CHARS,
  RefString,
  TargetString,
  TokenListString,
} from '../http/ids.js';
import { EXPANDS } from './view.js';

const Str = (description?: string) => Type.String(description ? { description } : {});
const Opt = <T extends TSchema>(schema: T) => Type.Optional(schema);

/** `?version=&wait_for_completion=` of runsStart and runsRerun. */
export const RunStartQuery = Type.Object({
  version: Opt(RefString('Release version, `latest`, a git ref; for a rerun also `original`.')),
  wait_for_completion: Opt(
    Type.Integer({ minimum: 0, maximum: 600, description: 'Seconds to wait (max 600); omit for async.' }),
  ),
});
export type RunStartQuery = Static<typeof RunStartQuery>;

/** `{ "$fileId": "file_…" }` or `{ "$inline": { filename, mimeType, base64 } }`. */
export const FileRef = Type.Union([
  Type.Object({ $fileId: IdString('Reusable file id (POST /files or an upload session)') }),
  Type.Object({
    $inline: Type.Object({
      filename: Type.String({ minLength: 1, maxLength: 1024 }),
      mimeType: Opt(Type.String({ maxLength: 256 })),
      base64: Type.String(),
    }),
  }),
]);
export type FileRef = Static<typeof FileRef>;

export const RunStartRequest = Type.Object(
  {
    target: TargetString(
      '`workflows.<slug or id>`, `agents.<slug or id>` or an automation id, optionally with `@<version>`',
    ),
    input: Opt(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          'Automation arguments. A top-level value `{"$fileId": …}` (how the SDK passes a pre-uploaded file) becomes an input file of that field.',
      }),
    ),
    files: Opt(
      Type.Record(Type.String(), Type.Union([FileRef, Type.Array(FileRef)]), {
        description: 'Input files per field; bytes can also go as multipart `files.<field>` parts.',
      }),
    ),
    overrides: Opt(
      Type.Object(
        { steps: Opt(Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown()))) },
        { description: 'Per-step output overrides (workflow runs).' },
      ),
    ),
    metadata: Opt(Type.Record(Type.String(), Type.Unknown())),
  },
  {
    // Named as the SDK's type: this is its RunStartBody, with bounded identifiers.
    $id: 'RunStartBody',
    description:
      'JSON, or multipart/form-data with parts target, input (JSON), overrides (JSON), metadata (JSON) and files.<field> file parts.',
  },
);
export type RunStartRequest = Static<typeof RunStartRequest>;

export const GetRunQuery = Type.Object({
  expand: Opt(
    Type.Array(Type.Union(EXPANDS.map((e) => Type.Literal(e))), {
      description: `Comma list of optional sections: ${EXPANDS.join(', ')}`,
    }),
  ),
});

export const ArtifactsQuery = Type.Object({
  zip: Opt(Type.Literal('1', { description: '1: a ZIP of the output files instead of the list' })),
  bundle: Opt(Type.Literal('review', { description: 'with zip=1: output/ and expected/ folders' })),
  token: Opt(
    Type.String({ maxLength: 1024, description: 'Signed download token (ZIP only; no bearer key needed)' }),
  ),
});

const Time = (d: string) => Opt(Str(`${d} (ISO-8601 time or date, epoch ms, or relative like -7d)`));
const BoolQ = (d: string) => Opt(Type.Boolean({ description: d }));

/** runsList: the SDK's query names. */
export const RunListQuery = Type.Object({
  type: Opt(TokenListString('comma list: workflow, agent')),
  source: Opt(IdListString('comma list of automation ids or aliases')),
  status: Opt(TokenListString('comma list of execution statuses')),
  trigger: Opt(TokenListString('comma list of trigger types')),
  triggeredBy: Opt(TokenListString('comma list of user ids, or system')),
  sourceRef: Opt(
    Type.String({ maxLength: MAX_REF_CHARS, description: 'release version, tag, ref or commit prefix' }),
  ),
  batchId: Opt(IdListString('comma list of batch ids')),
  exampleId: Opt(IdListString('comma list of example ids')),
  exampleIdContains: Opt(Type.String({ maxLength: 256 })),
  from: Time('created at or after'),
  to: Time('created at or before'),
  createdAfter: Time('created at or after'),
  createdBefore: Time('created at or before'),
  completedAfter: Time('completed at or after'),
  completedBefore: Time('completed at or before'),
  cursor: Opt(Type.String({ maxLength: MAX_CURSOR_CHARS, description: 'opaque; from nextCursor' })),
  offset: Opt(Type.Integer({ minimum: 0 })),
  limit: Opt(Type.Integer({ minimum: 1, maximum: 10000 })),
  ids: Opt(IdListString('comma list of run ids')),
  experiments: BoolQ('false excludes experiment (batch) runs'),
  sort: Opt(
    Type.Union([
      Type.Literal('created_at'),
      Type.Literal('createdAt'),
      Type.Literal('completed_at'),
      Type.Literal('completedAt'),
    ]),
  ),
  order: Opt(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
  reviewStatus: Opt(TokenListString('comma list: open, closed, wont_fix')),
  reviewVerdict: Opt(TokenListString('comma list: correct, incorrect, nit')),
  hasReview: BoolQ('only reviewed runs'),
  noReview: BoolQ('only runs without review'),
  hasCorrections: BoolQ('reviews with corrections'),
  reviewNoteContains: Opt(Type.String({ maxLength: 1024 })),
  search: Opt(
    Type.String({
      maxLength: 256,
      description: 'run id, example id, review note or a string in the input metadata contains it (any case)',
    }),
  ),
  reviewCreatedAfter: Time('review created at or after'),
  reviewCreatedBefore: Time('review created at or before'),
  reviewUpdatedAfter: Time('review updated at or after'),
  reviewUpdatedBefore: Time('review updated at or before'),
  reviewClosedAfter: Time('review closed at or after'),
  reviewClosedBefore: Time('review closed at or before'),
  sinceLastClosed: BoolQ('runs created after the latest closed review'),
  sampleRate: Opt(
    Type.Number({ minimum: 0, maximum: 1, description: 'keeps runs whose sampleRank is below it' }),
  ),
});
export type RunListParams = Static<typeof RunListQuery>;
