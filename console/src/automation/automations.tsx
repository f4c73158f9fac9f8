// The catalogue: automations with their versions and triggers, and the form that starts a run.

import { EmptyRow } from '../ui/empty.js';
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { AutomationSchedule } from './schedule.js';
import { serviceUrl } from '../services.js';
import { automationUrl } from './urls.js';
import {
  AutomationNav,
  Failure,
  Field,
  JsonView,
  Show,
  enc,
  When,
  href,
  navigate,
  useAction,
  useLoad,
  OffsetPager,
  TableHead,
} from './ui.js';
import type {
  AutomationDetail,
  AutomationTriggersResponse,
  ListAutomationVersionsResponse,
  ListAutomationsResponse,
  RunStartResponse,
} from './wire.js';

const PAGE = 50;

export function AutomationList({ query }: { query: URLSearchParams }) {
  const search = query.get('search') ?? '';
  const offset = Number(query.get('offset') ?? '0') || 0;
  const [text, setText] = useState(search);
  const list = useLoad(
    (signal) =>
      api<ListAutomationsResponse>(
        serviceUrl(
          'automation',
          `/api/v1/automations?${new URLSearchParams({ search, limit: String(PAGE), offset: String(offset) })}`,
        ),
        { signal },
      ),
    [search, offset],
  );
  return (
    <div>
      <h1>Automations</h1>
      <form
        class="sa-row"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          navigate('', { search: text });
        }}
      >
        <Field label="Search">
          <input type="search" value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </Field>
        <button type="submit">Search</button>
      </form>
      <Show loaded={list} what="automations">
        {(page) => (
          <>
            <div class="sa-scroll">
              <table class="sa-table">
                <caption class="sa-muted">
                  {page.total} automations{search ? ` matching “${search}”` : ''}
                </caption>
                <TableHead cols={['Name', 'Type', 'Version', 'Triggers', 'Updated']} />
                <tbody>
                  {page.data.length === 0 ? (
                    <EmptyRow cols={5}>
                      {search ? (
                        <>No automation matches “{search}”: clear the search to see them all.</>
                      ) : (
                        <>
                          No automations yet. Release one: tag it in the registry (
                          <code>git tag -a workflows.&lt;slug&gt;@1.0.0</code>) and sync it with{' '}
                          <code>POST /api/v1/automations/&lt;id&gt;/sync</code> (docs/automation.md,
                          “Releasing”).
                        </>
                      )}
                    </EmptyRow>
                  ) : null}
                  {page.data.map((a) => (
                    <tr key={a.id}>
                      <td>
                        <a href={href(`/automations/${enc(a.id)}`)}>{a.name ?? a.slug}</a>
                        <div class="sa-muted sa-small">{`${a.type}s.${a.slug}`}</div>
                      </td>
                      <td>{a.type}</td>
                      <td>{a.version ?? '—'}</td>
                      <td>{a.triggers ? triggerList(a.triggers) : '—'}</td>
                      <td>
                        <When at={a.updatedAt ?? a.createdAt} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <OffsetPager
              path=""
              query={{ search }}
              offset={offset}
              size={PAGE}
              total={page.total}
              label="Pages"
            />
          </>
        )}
      </Show>
    </div>
  );
}

function triggerList(t: { api: boolean; email: boolean; manual: boolean; cron: boolean }): string {
  const on = Object.entries<boolean>(t)
    .filter(([, v]) => v)
    .map(([k]) => k);
  return on.length > 0 ? on.join(', ') : 'none';
}

export function AutomationOverview({ id }: { id: string }) {
  const detail = useLoad((signal) => api<AutomationDetail>(automationUrl(id), { signal }), [id]);
  const versions = useLoad(
    (signal) => api<ListAutomationVersionsResponse>(automationUrl(id, '/versions?limit=100'), { signal }),
    [id],
  );
  const triggers = useLoad(
    (signal) => api<AutomationTriggersResponse>(automationUrl(id, '/triggers'), { signal }),
    [id],
  );
  return (
    <div>
      <Show loaded={detail} what="the automation">
        {(a) => (
          <>
            <h1>{a.name ?? a.slug}</h1>
            <AutomationNav id={id} current="" />
            <dl class="sa-facts">
              <dt>Id</dt>
              <dd>
                <code>{a.id}</code>
              </dd>
              <dt>Alias</dt>
              <dd>
                <code>{`${a.type}s.${a.slug}`}</code>
              </dd>
              <dt>Status</dt>
              <dd>{a.status ?? '—'}</dd>
              <dt>Current version</dt>
              <dd>{a.version ?? '—'}</dd>
              {a.description ? (
                <>
                  <dt>Description</dt>
                  <dd>{a.description}</dd>
                </>
              ) : null}
            </dl>
            <StartRun automation={a} />
            <h2>Triggers</h2>
            <Show loaded={triggers} what="triggers">
              {(t) => (
                <ul class="sa-inline-list" aria-label="Triggers">
                  {Object.entries<boolean>(t.triggers).map(([k, v]) => (
                    <li key={k}>
                      <span class={v ? 'sa-on' : 'sa-off'}>{k}</span>: {v ? 'on' : 'off'}
                    </li>
                  ))}
                </ul>
              )}
            </Show>
            <AutomationSchedule id={id} />
            <h2>Versions</h2>
            <Show loaded={versions} what="versions">
              {(v) => (
                <div class="sa-scroll">
                  <table class="sa-table">
                    <TableHead cols={['Version', 'Release tag', 'Current', 'Created']} />
                    <tbody>
                      {v.data.map((row) => (
                        <tr key={row.id}>
                          <td>{row.version ?? '—'}</td>
                          <td>
                            <code>{row.sourceRef ?? '—'}</code>
                          </td>
                          <td>{row.isCurrent ? 'current' : ''}</td>
                          <td>
                            <When at={row.createdAt} />
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </Show>
            <details>
              <summary>Input and output schemas</summary>
              <h3>Input schema</h3>
              <JsonView value={a.inputSchema ?? null} label="Input schema" />
              <h3>Output schema</h3>
              <JsonView value={a.outputSchema ?? null} label="Output schema" />
            </details>
          </>
        )}
      </Show>
    </div>
  );
}

function StartRun({ automation }: { automation: AutomationDetail }) {
  const [input, setInput] = useState('{}');
  const [version, setVersion] = useState('');
  const action = useAction();
  let parseError: string | null = null;
  try {
    const v: unknown = JSON.parse(input);
    if (typeof v !== 'object' || v === null || Array.isArray(v))
      parseError = 'The input must be a JSON object.';
  } catch (err) {
    parseError = `Not JSON: ${(err as Error).message}`;
  }
  const submit = () =>
    action.run(async () => {
      const target = `${automation.type}s.${automation.slug}${version ? `@${version}` : ''}`;
      const started = await api<RunStartResponse>(serviceUrl('automation', '/api/v1/runs'), {
        method: 'POST',
        body: { target, input: JSON.parse(input) as unknown },
      });
      navigate(`/runs/${enc(started.id)}`);
    });
  return (
    <section aria-labelledby="start-run">
      <h2 id="start-run">Start a run</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!parseError) void submit();
        }}
      >
        <Field label="Input (JSON object)">
          <textarea
            name="input"
            rows={6}
            spellcheck={false}
            class="sa-code"
            value={input}
            aria-invalid={parseError !== null}
            aria-describedby="start-input-error"
            onInput={(e) => setInput(e.currentTarget.value)}
          />
        </Field>
        <p id="start-input-error" class="sa-invalid" aria-live="polite">
          {parseError ?? ''}
        </p>
        <Field label="Version (optional)" hint="a release version or git ref; empty = latest">
          <input value={version} onInput={(e) => setVersion(e.currentTarget.value)} />
        </Field>
        <button type="submit" disabled={action.busy || parseError !== null}>
          {action.busy ? 'Starting…' : 'Start run'}
        </button>
      </form>
      <Failure error={action.error} title="The run did not start" />
    </section>
  );
}
