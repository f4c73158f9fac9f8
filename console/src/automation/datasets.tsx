// A tenant's dataset of an automation: examples (offset pages, as the API pages them), their
// input and expected files, archive import and export, and the selection an experiment starts
// from.

import { EmptyRow } from '../ui/empty.js';
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { FileRows, download } from './files.js';
import {
  AutomationHeader,
  AutomationLine,
  Failure,
  Field,
  JsonView,
  Show,
  enc,
  encPath,
  When,
  href,
  navigate,
  useAction,
  useLoad,
  OffsetPager,
  TableHead,
} from './ui.js';
import { automationUrl, exampleUrl } from './urls.js';
import type { DatasetExample, DatasetExampleList, DatasetImportResponse } from './wire.js';

const PAGE = 50;

export function Dataset({ id, query }: { id: string; query: URLSearchParams }) {
  const offset = Number(query.get('offset') ?? '0') || 0;
  const list = useLoad(
    (signal) =>
      api<DatasetExampleList>(automationUrl(id, `/examples?limit=${PAGE}&offset=${offset}`), { signal }),
    [id, offset],
  );
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const toggle = (exampleId: string, on: boolean) =>
    setSelected((s) => {
      const next = new Set(s);
      if (on) next.add(exampleId);
      else next.delete(exampleId);
      return next;
    });
  const action = useAction();
  return (
    <div>
      <AutomationHeader id={id} title="Dataset" current="/dataset" />
      <Failure error={action.error} />
      <Show loaded={list} what="examples">
        {(page) => (
          <>
            <div class="sa-row">
              <button
                type="button"
                disabled={selected.size === 0}
                onClick={() =>
                  navigate(`/automations/${enc(id)}/experiments/new`, { examples: [...selected].join(',') })
                }
              >
                Start an experiment from {selected.size} selected
              </button>
              <button
                type="button"
                disabled={page.total === 0}
                onClick={() => navigate(`/automations/${enc(id)}/experiments/new`)}
              >
                Start an experiment on the whole dataset
              </button>
              <button
                type="button"
                disabled={action.busy}
                onClick={() =>
                  void action.run(() =>
                    download(
                      automationUrl(
                        id,
                        selected.size > 0
                          ? `/dataset/export?exampleIds=${[...selected].map(enc).join(',')}`
                          : '/dataset/export',
                      ),
                      `${id}-dataset.zip`,
                      'application/zip',
                    ),
                  )
                }
              >
                Export {selected.size > 0 ? 'selected' : 'all'} (ZIP)
              </button>
            </div>
            <div class="sa-scroll">
              <table class="sa-table" data-testid="examples-table">
                <caption class="sa-muted">{page.total} examples</caption>
                <TableHead
                  cols={[<span class="sa-sr">Select</span>, 'Name', 'Expected', 'Latest run', 'Updated']}
                />
                <tbody>
                  {page.data.length === 0 ? (
                    <EmptyRow cols={5}>
                      No examples yet. Add one with <strong>Add example</strong> below, import an archive (
                      <strong>Import</strong>), or promote a reviewed run from its Review tab.
                    </EmptyRow>
                  ) : null}
                  {page.data.map((ex) => (
                    <tr key={ex.id}>
                      <td>
                        <input
                          type="checkbox"
                          aria-label={`Select ${ex.name}`}
                          checked={selected.has(ex.id)}
                          onChange={(e) => toggle(ex.id, e.currentTarget.checked)}
                        />
                      </td>
                      <td>
                        <a href={href(`/automations/${enc(id)}/dataset/${enc(ex.id)}`)}>{ex.name}</a>
                      </td>
                      <td>
                        {ex.expected ? 'output' : '—'}
                        {ex.expectedFiles.length > 0 ? `, ${ex.expectedFiles.length} files` : ''}
                      </td>
                      <td>
                        {ex.latestRunId ? (
                          <a href={href(`/runs/${enc(ex.latestRunId)}`)}>{ex.latestRunId}</a>
                        ) : (
                          '—'
                        )}
                      </td>
                      <td>
                        <When at={ex.updatedAt} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <OffsetPager
              path={`/automations/${enc(id)}/dataset`}
              offset={offset}
              size={PAGE}
              total={page.total}
              label="Pages of examples"
            />
          </>
        )}
      </Show>
      <NewExample id={id} onCreated={list.reload} />
      <Import id={id} onImported={list.reload} />
    </div>
  );
}

function parseObject(text: string, what: string, allowEmpty: boolean): { value?: unknown; error?: string } {
  if (allowEmpty && text.trim() === '') return {};
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v !== 'object' || v === null || Array.isArray(v))
      return { error: `${what} must be a JSON object.` };
    return { value: v };
  } catch (err) {
    return { error: `${what} is not JSON: ${(err as Error).message}` };
  }
}

function NewExample({ id, onCreated }: { id: string; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [input, setInput] = useState('{}');
  const [expected, setExpected] = useState('');
  const action = useAction();
  const inputCheck = parseObject(input, 'Input', false);
  const expectedCheck = parseObject(expected, 'Expected output', true);
  const problems = [inputCheck.error, expectedCheck.error].filter(Boolean);
  return (
    <details class="sa-block">
      <summary>Add an example</summary>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (problems.length > 0) return;
          void action.run(async () => {
            await api<DatasetExample>(automationUrl(id, '/examples'), {
              method: 'POST',
              body: {
                ...(name ? { name } : {}),
                input: inputCheck.value,
                ...(expectedCheck.value !== undefined ? { expected: expectedCheck.value } : {}),
              },
            });
            setName('');
            onCreated();
          });
        }}
      >
        <Field label="Name (optional)">
          <input value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field label="Input (JSON object)">
          <textarea class="sa-code" rows={5} value={input} onInput={(e) => setInput(e.currentTarget.value)} />
        </Field>
        <Field label="Expected output (JSON object, optional)">
          <textarea
            class="sa-code"
            rows={5}
            value={expected}
            onInput={(e) => setExpected(e.currentTarget.value)}
          />
        </Field>
        <ul class="sa-invalid" aria-live="polite">
          {problems.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
        <button type="submit" disabled={action.busy || problems.length > 0}>
          Add example
        </button>
      </form>
      <Failure error={action.error} title="The example was not added" />
    </details>
  );
}

function Import({ id, onImported }: { id: string; onImported: () => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [mode, setMode] = useState<'append' | 'replace'>('append');
  const [result, setResult] = useState<DatasetImportResponse | null>(null);
  const action = useAction();
  return (
    <details class="sa-block">
      <summary>Import an archive</summary>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!file) return;
          void action.run(async () => {
            setResult(null);
            const form = new FormData();
            form.append('mode', mode);
            form.append('file', file, file.name);
            setResult(
              await api<DatasetImportResponse>(automationUrl(id, '/dataset/import'), {
                method: 'POST',
                body: form,
              }),
            );
            onImported();
          });
        }}
      >
        <Field label="Dataset archive (ZIP)">
          <input
            type="file"
            accept=".zip,application/zip"
            onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
          />
        </Field>
        <fieldset>
          <legend>Mode</legend>
          <label class="sa-check">
            <input type="radio" name="mode" checked={mode === 'append'} onChange={() => setMode('append')} />
            append (keep existing examples; skip names the dataset has)
          </label>
          <label class="sa-check">
            <input
              type="radio"
              name="mode"
              checked={mode === 'replace'}
              onChange={() => setMode('replace')}
            />
            replace (delete every example first)
          </label>
        </fieldset>
        <button type="submit" disabled={!file || action.busy}>
          Import
        </button>
      </form>
      <Failure error={action.error} title="The archive was refused" />
      {result ? (
        <div role="status">
          <p class="sa-ok">
            Imported ({result.mode}): {result.created} created, {result.expectedSet} with an expected output
            {'skipped' in result ? `, ${String(result.skipped)} skipped` : ''}
            {'deleted' in result ? `, ${String(result.deleted)} deleted` : ''}.
          </p>
          {'issues' in result && Array.isArray(result.issues) && result.issues.length > 0 ? (
            <ul>
              {(result.issues as { field?: string; message?: string }[]).map((i, n) => (
                <li key={n}>
                  <code>{i.field ?? ''}</code> {i.message ?? ''}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </details>
  );
}

export function ExampleDetail({ id, exampleId }: { id: string; exampleId: string }) {
  const example = useLoad(
    (signal) => api<DatasetExample>(exampleUrl(id, exampleId), { signal }),
    [id, exampleId],
  );
  const action = useAction();
  return (
    <div>
      <p>
        <a href={href(`/automations/${enc(id)}/dataset`)}>← Dataset</a>
      </p>
      <AutomationLine id={id} />
      <Show loaded={example} what="the example">
        {(ex) => (
          <>
            <h1>{ex.name}</h1>
            <dl class="sa-facts">
              <dt>Id</dt>
              <dd>
                <code>{ex.id}</code>
              </dd>
              <dt>Row</dt>
              <dd>{ex.rowOrder ?? '—'}</dd>
              <dt>Latest run</dt>
              <dd>
                {ex.latestRunId ? <a href={href(`/runs/${enc(ex.latestRunId)}`)}>{ex.latestRunId}</a> : '—'}
              </dd>
              <dt>Annotation</dt>
              <dd>{ex.annotation ?? '—'}</dd>
            </dl>
            <div class="sa-row">
              <button
                type="button"
                disabled={action.busy}
                onClick={() =>
                  void action.run(async () => {
                    const run = await api<{ id: string }>(exampleUrl(id, exampleId, '/run'), {
                      method: 'POST',
                    });
                    navigate(`/runs/${enc(run.id)}`);
                  })
                }
              >
                Run this example
              </button>
              <button
                type="button"
                disabled={action.busy}
                onClick={() =>
                  void action.run(async () => {
                    await api(exampleUrl(id, exampleId), { method: 'DELETE' });
                    navigate(`/automations/${enc(id)}/dataset`);
                  })
                }
              >
                Delete example
              </button>
            </div>
            <Failure error={action.error} />
            <div class="sa-columns">
              <section aria-labelledby="ex-input">
                <h2 id="ex-input">Input</h2>
                <JsonView value={ex.input} label="Example input" />
              </section>
              <section aria-labelledby="ex-expected">
                <h2 id="ex-expected">Expected output</h2>
                <div data-testid="example-expected">
                  <JsonView value={ex.expected ?? null} label="Expected output" />
                </div>
              </section>
            </div>
            {ex.metadata ? (
              <details>
                <summary>Metadata</summary>
                <JsonView value={ex.metadata} />
              </details>
            ) : null}
            <ExampleFiles id={id} exampleId={exampleId} folder="input" />
            <ExampleFiles id={id} exampleId={exampleId} folder="expected" />
          </>
        )}
      </Show>
    </div>
  );
}

function ExampleFiles({
  id,
  exampleId,
  folder,
}: {
  id: string;
  exampleId: string;
  folder: 'input' | 'expected';
}) {
  const base = exampleUrl(id, exampleId, `/${folder}`);
  const files = useLoad((signal) => api<{ files: string[] }>(base, { signal }), [base]);
  const [upload, setUpload] = useState<File | null>(null);
  const [path, setPath] = useState('');
  const action = useAction();
  const act = (fn: () => Promise<void>) =>
    void action.run(async () => {
      await fn();
      files.reload();
    });
  const title = folder === 'input' ? 'Input files' : 'Expected files';
  return (
    <section class="sa-block" aria-label={title}>
      <h2>{title}</h2>
      <Failure error={action.error} />
      <Show loaded={files} what={title.toLowerCase()}>
        {(f) =>
          f.files.length === 0 ? (
            <p class="sa-muted">None.</p>
          ) : (
            <FileRows
              names={f.files}
              urlOf={(p) => `${base}/${encPath(p)}`}
              rename={async (p, to) =>
                void (await api(`${base}/${encPath(p)}`, { method: 'PATCH', body: { newFilename: to } }))
              }
              remove={async (p) => void (await api(`${base}/${encPath(p)}`, { method: 'DELETE' }))}
              renameDefault={(p) => p.split('/').pop() ?? p}
              act={act}
              testId={`example-${folder}-files`}
            />
          )
        }
      </Show>
      <form
        class="sa-row"
        aria-label={`Upload ${folder} file`}
        onSubmit={(e) => {
          e.preventDefault();
          if (!upload) return;
          act(async () => {
            const form = new FormData();
            form.append('file', upload, path || upload.name);
            await api(base, { method: 'POST', body: form });
            setPath('');
          });
        }}
      >
        <Field label={`${folder === 'input' ? 'Input' : 'Expected'} file`}>
          <input type="file" onChange={(e) => setUpload(e.currentTarget.files?.[0] ?? null)} />
        </Field>
        <Field label="Path in the folder (optional)" hint="e.g. docs/a.pdf">
          <input value={path} onInput={(e) => setPath(e.currentTarget.value)} />
        </Field>
        <button type="submit" disabled={!upload || action.busy}>
          Upload
        </button>
      </form>
    </section>
  );
}
