// Topics: the list with partitions, records held and the current record rate (from the growth
// of the end offsets between two polls), and a form to create one.

import { useRef, useState } from 'preact/hooks';
import { href } from '../shell/router.js';
import { ErrorBox } from '../ui/error-box.js';
import { Form, TextField } from '../ui/forms.js';
import { useAction, useLoad } from '../ui/hooks.js';
import { Table } from '../ui/table.js';
import { createTopic, describeTopic, listTopics, type TopicInfo } from './api.js';

export const POLL_MS = 3_000;

/** Records per second per key, from the end offsets of two polls. */
export function useRates() {
  const last = useRef(new Map<string, { at: number; end: number }>());
  return (key: string, end: number): number | undefined => {
    const now = performance.now();
    const previous = last.current.get(key);
    last.current.set(key, { at: now, end });
    if (!previous || now <= previous.at) return undefined;
    return ((end - previous.end) * 1000) / (now - previous.at);
  };
}

export const rateText = (rate: number | undefined) => (rate === undefined ? '—' : `${rate.toFixed(1)}/s`);
const total = (t: TopicInfo) => t.partitions.reduce((n, p) => n + p.end_offset - p.beginning_offset, 0);
const ends = (t: TopicInfo) => t.partitions.reduce((n, p) => n + p.end_offset, 0);

interface Row {
  topic: TopicInfo;
  rate: number | undefined;
}

export function TopicsView() {
  const rate = useRates();
  const [created, setCreated] = useState(0);
  const topics = useLoad(
    async (signal) => {
      const names = await listTopics(signal);
      const infos = await Promise.all(names.map((n) => describeTopic(n, signal)));
      return infos.map((t): Row => ({ topic: t, rate: rate(t.name, ends(t)) }));
    },
    [created],
    POLL_MS,
  );
  return (
    <section aria-labelledby="st-topics">
      <h1 id="st-topics">Topics</h1>
      {topics.error ? <ErrorBox error={topics.error} context="Loading topics" service="streams" /> : null}
      <Table<Row>
        caption="Topics"
        rowKey={(r) => r.topic.name}
        rows={topics.data ?? []}
        pageSize={50}
        empty={
          topics.data ? (
            <>
              No topics yet. Create one with <strong>Create topic</strong> below.
            </>
          ) : (
            'Loading…'
          )
        }
        columns={[
          {
            key: 'name',
            label: 'Topic',
            render: (r) => (
              <a href={href('streams', `/topics/${encodeURIComponent(r.topic.name)}`)}>{r.topic.name}</a>
            ),
          },
          {
            key: 'partitions',
            label: 'Partitions',
            numeric: true,
            render: (r) => String(r.topic.partitions_count),
          },
          { key: 'records', label: 'Records', numeric: true, render: (r) => String(total(r.topic)) },
          { key: 'rate', label: 'Rate', numeric: true, render: (r) => rateText(r.rate) },
          { key: 'created', label: 'Created', render: (r) => r.topic.created_at },
        ]}
      />
      <CreateTopic onCreated={() => setCreated((n) => n + 1)} />
    </section>
  );
}

function CreateTopic({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState('');
  const [partitions, setPartitions] = useState('1');
  const action = useAction<string>();
  const submit = () =>
    action.run(async () => {
      const answer = await createTopic(name.trim(), Number(partitions));
      setName('');
      onCreated();
      return answer.message;
    });
  return (
    <>
      <h2>Create a topic</h2>
      <Form label="Create a topic" onSubmit={submit} submitLabel="Create topic" busy={action.busy}>
        <div class="form-row">
          <TextField label="Topic name" name="topic" value={name} onValue={setName} required />
          <TextField
            label="Partitions"
            name="partitions"
            type="number"
            min={1}
            value={partitions}
            onValue={setPartitions}
          />
        </div>
      </Form>
      {action.failure ? (
        <ErrorBox error={action.failure} context="Creating the topic" service="streams" />
      ) : null}
      {action.result ? <p role="status">{action.result}</p> : null}
    </>
  );
}
