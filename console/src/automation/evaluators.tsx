// The evaluator config editor: the YAML as stored, saved with PUT; when the server refuses it
// (400 invalid_evaluators), each of its messages is shown at the line it names, in a gutter
// beside the text and in a list whose entries move the cursor to that line.

import { useRef, useState } from 'preact/hooks';
import { ApiFailure, api } from '../api.js';
import { issuesByLine, placeIssues, type PlacedIssue } from './issue-lines.js';
import { AutomationHeader, Failure, JsonView, Show, useAction, useLoad } from './ui.js';
import { automationUrl } from './urls.js';
import type { EvaluatorConfigResponse } from './wire.js';

export function Evaluators({ id }: { id: string }) {
  const config = useLoad(
    (signal) => api<EvaluatorConfigResponse>(automationUrl(id, '/evaluators'), { signal }),
    [id],
  );
  return (
    <div>
      <AutomationHeader id={id} title="Evaluators" current="/evaluators" />
      <Show loaded={config} what="the evaluator config">
        {(c) => <Editor id={id} stored={c} onSaved={config.setData} />}
      </Show>
    </div>
  );
}

function Editor({
  id,
  stored,
  onSaved,
}: {
  id: string;
  stored: EvaluatorConfigResponse;
  onSaved: (c: EvaluatorConfigResponse) => void;
}) {
  const [text, setText] = useState(stored.yaml);
  const [issues, setIssues] = useState<PlacedIssue[]>([]);
  const [saved, setSaved] = useState(false);
  const action = useAction();
  const area = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLDivElement>(null);
  const lines = text.split('\n');
  const byLine = issuesByLine(issues);

  const save = () =>
    action.run(async () => {
      setSaved(false);
      try {
        const next = await api<EvaluatorConfigResponse>(automationUrl(id, '/evaluators'), {
          method: 'PUT',
          body: { yaml: text },
        });
        setIssues([]);
        setSaved(true);
        onSaved(next);
      } catch (err) {
        if (err instanceof ApiFailure && err.status === 400 && err.issues.length > 0) {
          setIssues(placeIssues(err.issues));
          return;
        }
        throw err;
      }
    });

  /** Puts the cursor at the start of a 1-based line and scrolls it into view. */
  const goToLine = (line: number) => {
    const el = area.current;
    if (!el) return;
    const offset = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0);
    el.focus();
    el.setSelectionRange(offset, offset + (lines[line - 1]?.length ?? 0));
    const lineHeight = el.scrollHeight / Math.max(1, lines.length);
    el.scrollTop = Math.max(0, (line - 3) * lineHeight);
  };

  return (
    <>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <label for="evaluators-yaml" class="sa-field-label">
          Evaluator config (YAML)
        </label>
        <div class="sa-editor">
          <div class="sa-gutter" ref={gutter} aria-hidden="true">
            {lines.map((_, i) => (
              <div
                key={i}
                class={byLine.has(i + 1) ? 'sa-gutter-bad' : ''}
                title={byLine
                  .get(i + 1)
                  ?.map((p) => p.message)
                  .join('\n')}
              >
                {byLine.has(i + 1) ? '! ' : ''}
                {i + 1}
              </div>
            ))}
          </div>
          <textarea
            id="evaluators-yaml"
            ref={area}
            class="sa-code"
            rows={Math.min(40, Math.max(12, lines.length + 1))}
            spellcheck={false}
            wrap="off"
            value={text}
            aria-invalid={issues.length > 0}
            aria-describedby="evaluator-issues"
            onInput={(e) => {
              setText(e.currentTarget.value);
              setSaved(false);
            }}
            onScroll={(e) => {
              if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
            }}
          />
        </div>
        <div class="sa-row">
          <button type="submit" disabled={action.busy}>
            {action.busy ? 'Validating…' : 'Validate and save'}
          </button>
          <button type="button" onClick={() => setText(stored.yaml)} disabled={text === stored.yaml}>
            Revert
          </button>
          <span role="status" class="sa-ok">
            {saved ? 'Saved: the server accepted the config.' : ''}
          </span>
        </div>
      </form>
      <div id="evaluator-issues" aria-live="polite">
        {issues.length > 0 ? (
          <div class="sa-error" role="alert" data-testid="evaluator-issues">
            <strong>The server refused the config ({issues.length} problems):</strong>
            <ul>
              {issues.map((i, n) => (
                <li key={n}>
                  {i.line !== null ? (
                    <button type="button" class="sa-link" onClick={() => goToLine(i.line!)}>
                      line {i.line}
                    </button>
                  ) : (
                    <span>(no line)</span>
                  )}{' '}
                  <code>{i.field}</code> {i.message}
                </li>
              ))}
            </ul>
          </div>
        ) : null}
      </div>
      <Failure error={action.error} title="The config was not saved" />
      <details>
        <summary>Parsed config as stored (defaults filled in)</summary>
        <p>Pass threshold: {stored.config.passThreshold}</p>
        <JsonView value={stored.config.evaluators} label="Parsed evaluators" />
      </details>
    </>
  );
}
