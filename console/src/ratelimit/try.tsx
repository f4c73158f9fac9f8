// "Try a request": the /json body built from a form, sent to the dry-run endpoint, which answers
// with the decision, the matched rule and the remaining quota without counting the request.

import { fmtProtoDuration } from '../ui/time.js';
import { useState } from 'preact/hooks';
import { ErrorBox } from '../ui/error-box.js';
import { Form, TextArea, TextField } from '../ui/forms.js';
import { useAction, useLoad } from '../ui/hooks.js';
import { Table } from '../ui/table.js';
import { dryRun, loadConfig, type DryRunAnswer, type DryRunRequest, type DryRunStatus } from './api.js';
import { ruleText } from './rules.js';

/** One descriptor per line, entries as `key=value` separated by commas. */
export function parseDescriptors(text: string): DryRunRequest['descriptors'] | string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  if (lines.length === 0) return 'Enter at least one descriptor, e.g. path=/login';
  const out: DryRunRequest['descriptors'] = [];
  for (const [n, line] of lines.entries()) {
    const entries = [];
    for (const part of line.split(',')) {
      const item = part.trim();
      if (item === '') continue;
      const eq = item.indexOf('=');
      const key = (eq >= 0 ? item.slice(0, eq) : item).trim();
      if (key === '') return `Line ${n + 1}: an entry needs a key before "="`;
      entries.push({ key, value: eq >= 0 ? item.slice(eq + 1).trim() : '' });
    }
    out.push({ entries });
  }
  return out;
}

interface Row extends DryRunStatus {
  index: number;
  descriptor: string;
}

export function TryView() {
  const config = useLoad((signal) => loadConfig(signal), []);
  const firstDomain = config.data?.domains[0]?.domain ?? '';
  const [domain, setDomain] = useState<string | undefined>(undefined);
  const [descriptors, setDescriptors] = useState('');
  const [hits, setHits] = useState('1');
  const [error, setError] = useState<string | undefined>(undefined);
  const action = useAction<{ request: DryRunRequest; result: DryRunAnswer }>();
  const answer = action.result;
  const domainValue = domain ?? firstDomain;

  const submit = async () => {
    const parsed = parseDescriptors(descriptors);
    if (typeof parsed === 'string') return setError(parsed);
    const addend = Number(hits);
    if (!Number.isInteger(addend) || addend < 1)
      return setError('Hits must be a whole number of at least 1.');
    setError(undefined);
    const request: DryRunRequest = {
      domain: domainValue,
      descriptors: parsed,
      ...(addend > 1 ? { hitsAddend: addend } : {}),
    };
    await action.run(async () => ({ request, result: await dryRun(request) }));
  };

  const rows: Row[] = (answer?.result.statuses ?? []).map((s, index) => ({
    ...s,
    index,
    descriptor: (answer?.request.descriptors[index]?.entries ?? [])
      .map((e) => (e.value === '' ? e.key : `${e.key}=${e.value}`))
      .join(', '),
  }));
  const domains = config.data?.domains.map((d) => d.domain) ?? [];
  return (
    <section aria-labelledby="rl-try">
      <h1 id="rl-try">Try a request</h1>
      <p class="muted">
        Shows the decision a request would get, without counting it: no counter or statistic moves.
      </p>
      {config.error ? (
        <ErrorBox error={config.error} context="Loading the domains" service="rate limit" />
      ) : null}
      <Form label="Try a request" onSubmit={submit} submitLabel="Try it" busy={action.busy}>
        <div class="form-row">
          <TextField
            label="Domain"
            name="domain"
            value={domainValue}
            onValue={setDomain}
            hint={domains.length > 0 ? `Loaded: ${domains.join(', ')}` : undefined}
          />
          <TextField label="Hits" name="hits" type="number" min={1} value={hits} onValue={setHits} />
        </div>
        <TextArea
          label="Descriptors"
          name="descriptors"
          rows={4}
          value={descriptors}
          onValue={setDescriptors}
          hint="One descriptor per line; entries as key=value separated by commas (e.g. path=/login, user=42)."
          error={error}
        />
      </Form>
      {action.failure ? <ErrorBox error={action.failure} context="Dry run" service="rate limit" /> : null}
      {answer ? (
        <div class="result" aria-live="polite">
          <h2>
            Decision:{' '}
            <span class={answer.result.overallCode === 'OVER_LIMIT' ? 'badge over' : 'badge ok'}>
              {answer.result.overallCode}
            </span>
          </h2>
          <Table<Row>
            caption="Per descriptor"
            rowKey={(r) => String(r.index)}
            rows={rows}
            columns={[
              { key: 'descriptor', label: 'Descriptor', render: (r) => <code>{r.descriptor}</code> },
              { key: 'code', label: 'Decision' },
              {
                key: 'rule',
                label: 'Matched rule',
                render: (r) =>
                  r.matchedRule ? (
                    <span>
                      <code>{r.matchedRule.metricKey || '(limit from the request)'}</code>{' '}
                      {ruleText(r.matchedRule)}
                    </span>
                  ) : (
                    <span class="muted">none</span>
                  ),
              },
              { key: 'hitsInWindow', label: 'Hits in window', numeric: true },
              {
                key: 'limitRemaining',
                label: 'Remaining',
                numeric: true,
                render: (r) => String(r.limitRemaining ?? 0),
              },
              {
                key: 'durationUntilReset',
                label: 'Resets in',
                render: (r) => fmtProtoDuration(r.durationUntilReset),
              },
            ]}
          />
        </div>
      ) : null}
    </section>
  );
}
