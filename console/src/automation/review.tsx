// The review editor of a finished run: verdict, status, note, the corrected output (a JSON editor
// checked against the automation's output schema as one types, see schema-check.ts), the field
// and file corrections, the corrected (expected) files, and promotion to a dataset example.

import { useEffect, useMemo, useState } from 'preact/hooks';
import { api } from '../api.js';
import { FileRows } from './files.js';
import { checkJsonText } from './schema-check.js';
import { automationUrl, runUrl } from './urls.js';
import { Failure, Field, Loading, Show, enc, When, href, useAction, useLoad } from './ui.js';
import type {
  AutomationDetail,
  PromoteRunResponse,
  Run,
  RunArtifactsResponse,
  RunReview,
  RunReviewCorrection,
  RunReviewDetail,
  RunReviewExpectedArtifacts,
} from './wire.js';

type Verdict = 'correct' | 'incorrect' | '';

interface CorrectionDraft {
  id?: string;
  kind: 'field' | 'file';
  path: string;
  label: string;
  originalValue?: unknown;
  corrected: string;
  note: string;
  correctedArtifactPath?: string | null;
}

function draftOf(c: RunReviewCorrection): CorrectionDraft {
  return {
    id: c.id,
    kind: c.kind,
    path: c.path,
    label: c.label ?? '',
    ...(c.originalValue !== undefined ? { originalValue: c.originalValue } : {}),
    corrected: c.correctedValue === undefined ? '' : JSON.stringify(c.correctedValue),
    note: c.note,
    ...(c.correctedArtifactPath !== undefined ? { correctedArtifactPath: c.correctedArtifactPath } : {}),
  };
}

/** A corrected value is JSON when it parses, else the text itself. */
function valueOf(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function ReviewEditor({ run }: { run: Run }) {
  const review = useLoad((signal) => api<RunReviewDetail>(runUrl(run.id, '/reviews'), { signal }), [run.id]);
  const automation = useLoad(
    (signal) => api<AutomationDetail>(automationUrl(run.source.id), { signal }),
    [run.source.id],
  );
  // Kept here: the form below starts afresh from each saved review.
  const [saved, setSaved] = useState<string | null>(null);
  if (!run.finished) return <p class="sa-muted">A run can be reviewed once it has finished.</p>;
  return (
    <Show loaded={review} what="the review">
      {(detail) => (
        <>
          <ReviewForm
            key={detail.review?.updatedAt ?? 'none'}
            run={run}
            review={detail.review}
            schema={automation.data?.outputSchema ?? null}
            onSaved={(next) => {
              review.setData(next);
              setSaved(next.review ? 'Review saved.' : 'Review deleted.');
            }}
            onEdit={() => setSaved(null)}
            saved={saved}
          />
          {detail.review ? (
            <ExpectedFiles run={run} />
          ) : (
            <p class="sa-muted">Save a review to attach corrected files.</p>
          )}
          <Promote run={run} />
        </>
      )}
    </Show>
  );
}

function ReviewForm({
  run,
  review,
  schema,
  onSaved,
  onEdit,
  saved,
}: {
  run: Run;
  review: RunReview | null;
  schema: unknown;
  onSaved: (detail: RunReviewDetail) => void;
  onEdit: () => void;
  saved: string | null;
}) {
  const [verdict, setVerdict] = useState<Verdict>(review?.verdict ?? '');
  const [status, setStatus] = useState<string>(review?.status ?? '');
  const [note, setNote] = useState(review?.note ?? '');
  const [useCorrected, setUseCorrected] = useState(review?.correctedOutput !== undefined);
  const [corrected, setCorrected] = useState(
    JSON.stringify(
      review?.correctedOutput !== undefined ? review.correctedOutput : (run.output ?? {}),
      null,
      2,
    ),
  );
  const [corrections, setCorrections] = useState<CorrectionDraft[]>((review?.corrections ?? []).map(draftOf));
  const action = useAction();
  const check = useMemo(
    () => (useCorrected ? checkJsonText(corrected, schema) : null),
    [useCorrected, corrected, schema],
  );
  const notJson = check !== null && check.value === undefined;

  const save = () =>
    action.run(async () => {
      onEdit();
      const body: Record<string, unknown> = {
        verdict: verdict === '' ? null : verdict,
        note,
        correctedOutput: useCorrected ? check?.value : null,
        corrections: corrections.map((c) => ({
          ...(c.id ? { id: c.id } : {}),
          kind: c.kind,
          path: c.path,
          label: c.label || null,
          ...(c.originalValue !== undefined ? { originalValue: c.originalValue } : {}),
          ...(valueOf(c.corrected) !== undefined ? { correctedValue: valueOf(c.corrected) } : {}),
          note: c.note || null,
          ...(c.correctedArtifactPath !== undefined
            ? { correctedArtifactPath: c.correctedArtifactPath }
            : {}),
        })),
      };
      if (status) body.status = status;
      onSaved(await api<RunReviewDetail>(runUrl(run.id, '/reviews'), { method: 'PUT', body }));
    });
  const clear = () =>
    action.run(async () => {
      onSaved(await api<RunReviewDetail>(runUrl(run.id, '/reviews'), { method: 'DELETE' }));
    });

  const setCorrection = (i: number, patch: Partial<CorrectionDraft>) =>
    setCorrections((list) => list.map((c, n) => (n === i ? { ...c, ...patch } : c)));

  return (
    <form
      class="sa-review"
      aria-label="Review"
      onSubmit={(e) => {
        e.preventDefault();
        if (!notJson) void save();
      }}
    >
      <h2>Review</h2>
      {review ? (
        <p class="sa-muted" data-testid="review-state">
          Review {review.id}: {review.verdict ?? 'nit'}, {review.status}; last saved{' '}
          <When at={review.reviewedAt} />
          {review.reviewedBy ? ` by ${review.reviewedBy}` : ''}
          {review.closedAt ? (
            <>
              ; closed <When at={review.closedAt} />
            </>
          ) : null}
        </p>
      ) : (
        <p class="sa-muted" data-testid="review-state">
          Not reviewed yet.
        </p>
      )}
      <fieldset>
        <legend>Verdict</legend>
        {(
          [
            ['correct', 'Correct'],
            ['incorrect', 'Incorrect'],
            ['', 'No verdict (nit)'],
          ] as [Verdict, string][]
        ).map(([v, label]) => (
          <label key={v || 'nit'} class="sa-check">
            <input
              type="radio"
              name="verdict"
              value={v}
              checked={verdict === v}
              onChange={() => setVerdict(v)}
            />
            {label}
          </label>
        ))}
      </fieldset>
      <Field label="Status" hint="default: closed for a correct verdict, open otherwise">
        <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
          <option value="">default</option>
          <option value="open">open</option>
          <option value="closed">closed</option>
          <option value="wont_fix">won't fix</option>
        </select>
      </Field>
      <Field label="Note">
        <textarea rows={3} value={note} onInput={(e) => setNote(e.currentTarget.value)} />
      </Field>

      <fieldset>
        <legend>Corrected output</legend>
        <label class="sa-check">
          <input
            type="checkbox"
            checked={useCorrected}
            onChange={(e) => setUseCorrected(e.currentTarget.checked)}
          />
          This run has a corrected output
        </label>
        {useCorrected ? (
          <>
            <Field label="Corrected output (JSON)">
              <textarea
                class="sa-code"
                rows={12}
                spellcheck={false}
                value={corrected}
                aria-invalid={(check?.problems.length ?? 0) > 0}
                aria-describedby="corrected-problems"
                onInput={(e) => setCorrected(e.currentTarget.value)}
              />
            </Field>
            <div class="sa-row">
              <button type="button" onClick={() => setCorrected(JSON.stringify(run.output ?? {}, null, 2))}>
                Reset to the run's output
              </button>
            </div>
            <div id="corrected-problems" aria-live="polite" data-testid="schema-problems">
              {check && check.problems.length > 0 ? (
                <ul class="sa-invalid">
                  {check.problems.map((p, i) => (
                    <li key={i}>
                      {p.path ? <code>{p.path}</code> : 'output'} {p.message}
                    </li>
                  ))}
                </ul>
              ) : (
                <p class="sa-ok">
                  {schema
                    ? 'Matches the output schema.'
                    : 'Valid JSON (the automation has no output schema).'}
                </p>
              )}
            </div>
          </>
        ) : null}
      </fieldset>

      <fieldset>
        <legend>Corrections</legend>
        {corrections.length === 0 ? <p class="sa-muted">No field or file corrections.</p> : null}
        {corrections.map((c, i) => (
          <div class="sa-correction" key={i} role="group" aria-label={`Correction ${i + 1}`}>
            <Field label="Kind">
              <select
                value={c.kind}
                onChange={(e) => setCorrection(i, { kind: e.currentTarget.value as 'field' | 'file' })}
              >
                <option value="field">field</option>
                <option value="file">file</option>
              </select>
            </Field>
            <Field label="Path" hint={c.kind === 'field' ? 'JSON Pointer, e.g. /words' : 'artifact path'}>
              <input
                value={c.path}
                required
                onInput={(e) => setCorrection(i, { path: e.currentTarget.value })}
              />
            </Field>
            <Field label="Label">
              <input value={c.label} onInput={(e) => setCorrection(i, { label: e.currentTarget.value })} />
            </Field>
            <Field label="Corrected value" hint="JSON, or plain text">
              <input
                class="sa-code"
                value={c.corrected}
                onInput={(e) => setCorrection(i, { corrected: e.currentTarget.value })}
              />
            </Field>
            <Field label="Note">
              <input value={c.note} onInput={(e) => setCorrection(i, { note: e.currentTarget.value })} />
            </Field>
            <button type="button" onClick={() => setCorrections((list) => list.filter((_, n) => n !== i))}>
              Remove correction {i + 1}
            </button>
          </div>
        ))}
        <button
          type="button"
          onClick={() =>
            setCorrections((list) => [
              ...list,
              { kind: 'field', path: '', label: '', corrected: '', note: '' },
            ])
          }
        >
          Add a correction
        </button>
      </fieldset>

      <div class="sa-row">
        <button type="submit" disabled={action.busy || notJson}>
          {action.busy ? 'Saving…' : 'Save review'}
        </button>
        {review ? (
          <button type="button" disabled={action.busy} onClick={() => void clear()}>
            Delete review
          </button>
        ) : null}
        <span role="status" class="sa-ok">
          {saved ?? ''}
        </span>
      </div>
      <Failure error={action.error} title="The review was not saved" />
    </form>
  );
}

function ExpectedFiles({ run }: { run: Run }) {
  const base = runUrl(run.id, '/reviews/expected');
  const files = useLoad((signal) => api<RunReviewExpectedArtifacts>(base, { signal }), [run.id]);
  const outputs = useLoad(
    (signal) => api<RunArtifactsResponse>(runUrl(run.id, '/artifacts'), { signal }),
    [run.id],
  );
  const [upload, setUpload] = useState<File | null>(null);
  const [uploadName, setUploadName] = useState('');
  const [copyFrom, setCopyFrom] = useState('');
  const action = useAction();
  const outputFiles = (outputs.data?.artifacts ?? []).filter((a) => a.role === 'output');
  useEffect(() => {
    if (!copyFrom && outputFiles[0]) setCopyFrom(outputFiles[0].name);
  }, [outputFiles.length]);
  const fileUrl = (name: string) => `${base}/${enc(name)}`;
  const act = (fn: () => Promise<void>) =>
    void action.run(async () => {
      await fn();
      files.reload();
    });
  return (
    <section aria-labelledby="expected-files" class="sa-block">
      <h2 id="expected-files">Corrected (expected) files</h2>
      <Failure error={action.error} title="The file change failed" />
      <Show loaded={files} what="corrected files">
        {(f) =>
          f.files.length === 0 ? (
            <p class="sa-muted">No corrected files.</p>
          ) : (
            <FileRows
              names={f.files.map((x) => x.name)}
              urlOf={fileUrl}
              rename={async (name, to) =>
                void (await api(fileUrl(name), { method: 'PATCH', body: { name: to } }))
              }
              remove={async (name) => void (await api(fileUrl(name), { method: 'DELETE' }))}
              act={act}
              testId="expected-files"
            />
          )
        }
      </Show>
      <form
        class="sa-row"
        aria-label="Upload a corrected file"
        onSubmit={(e) => {
          e.preventDefault();
          if (!upload) return;
          act(async () => {
            const form = new FormData();
            form.append('file', upload, upload.name);
            if (uploadName) form.append('name', uploadName);
            await api(base, { method: 'POST', body: form });
            setUploadName('');
          });
        }}
      >
        <Field label="File to upload">
          <input type="file" onChange={(e) => setUpload(e.currentTarget.files?.[0] ?? null)} />
        </Field>
        <Field label="Store as (optional)">
          <input value={uploadName} onInput={(e) => setUploadName(e.currentTarget.value)} />
        </Field>
        <button type="submit" disabled={!upload || action.busy}>
          Upload
        </button>
      </form>
      {outputFiles.length > 0 ? (
        <form
          class="sa-row"
          aria-label="Copy an output file"
          onSubmit={(e) => {
            e.preventDefault();
            act(async () => void (await api(base, { method: 'POST', body: { outputFileName: copyFrom } })));
          }}
        >
          <Field label="Output file">
            <select value={copyFrom} onChange={(e) => setCopyFrom(e.currentTarget.value)}>
              {outputFiles.map((a) => (
                <option key={a.path} value={a.name}>
                  {a.name}
                </option>
              ))}
            </select>
          </Field>
          <button type="submit" disabled={!copyFrom || action.busy}>
            Copy from output
          </button>
        </form>
      ) : outputs.loading ? (
        <Loading what="output files" />
      ) : null}
    </section>
  );
}

function Promote({ run }: { run: Run }) {
  const [name, setName] = useState('');
  const [result, setResult] = useState<PromoteRunResponse | null>(null);
  const action = useAction();
  return (
    <section aria-labelledby="promote" class="sa-block">
      <h2 id="promote">Promote to a dataset example</h2>
      <p class="sa-muted">
        The example takes the run's input and, as expected output, the corrected output (or the run's output);
        its expected files are the corrected files (or the output files). An example of the same name is
        updated.
      </p>
      <form
        class="sa-row"
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => {
            setResult(
              await api<PromoteRunResponse>(runUrl(run.id, '/promote'), {
                method: 'POST',
                body: name ? { name } : {},
              }),
            );
          });
        }}
      >
        <Field label="Example name (optional)" hint={`default: run ${run.id}`}>
          <input value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <button type="submit" disabled={action.busy}>
          Promote
        </button>
      </form>
      <Failure error={action.error} title="Promotion failed" />
      {result ? (
        <p role="status" class="sa-ok" data-testid="promoted">
          Promoted as example{' '}
          <a href={href(`/automations/${enc(result.automationId)}/dataset/${enc(result.exampleId)}`)}>
            {result.name ?? result.exampleId}
          </a>
          .
        </p>
      ) : null}
    </section>
  );
}
