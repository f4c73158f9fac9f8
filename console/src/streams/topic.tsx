// One topic: partitions with offsets and rates, a produce form, a record browser (partition;
// the tail, the beginning, an offset or a time; count) and live records over the push WebSocket.

import { useEffect, useState } from 'preact/hooks';
import { ErrorBox } from '../ui/error-box.js';
import { Checkbox, Form, parseJsonInput, SelectField, TextArea, TextField } from '../ui/forms.js';
import { useAction, useLoad } from '../ui/hooks.js';
import { Table } from '../ui/table.js';
import {
  describeTopic,
  followTopic,
  produce,
  readPartition,
  type PartitionInfo,
  type StreamRecord,
} from './api.js';
import { tailOffset } from './record-filter.js';
import { RecordTable } from './records.js';
import { POLL_MS, rateText, useRates } from './topics.js';

const LIVE_KEEP = 100;

interface Row extends PartitionInfo {
  rate: number | undefined;
}

export function TopicView({ name }: { name: string }) {
  const rate = useRates();
  const [refresh, setRefresh] = useState(0);
  const topic = useLoad(
    async (signal) => {
      const info = await describeTopic(name, signal);
      return {
        info,
        rows: info.partitions.map((p): Row => ({ ...p, rate: rate(`${name}/${p.partition}`, p.end_offset) })),
      };
    },
    [name, refresh],
    POLL_MS,
  );
  return (
    <section aria-labelledby="st-topic">
      <h1 id="st-topic">
        Topic <code>{name}</code>
      </h1>
      {topic.error ? <ErrorBox error={topic.error} context="Loading the topic" service="streams" /> : null}
      <Table<Row>
        caption="Partitions"
        rowKey={(r) => String(r.partition)}
        rows={topic.data?.rows ?? []}
        empty={topic.data ? 'No partitions.' : 'Loading…'}
        columns={[
          { key: 'partition', label: 'Partition', numeric: true },
          { key: 'beginning_offset', label: 'Begin offset', numeric: true },
          { key: 'end_offset', label: 'End offset', numeric: true },
          { key: 'rate', label: 'Rate', numeric: true, render: (r) => rateText(r.rate) },
        ]}
      />
      <div class="row">
        <div>
          <ProduceForm
            topic={name}
            partitions={topic.data?.info.partitions_count ?? 1}
            onProduced={() => setRefresh((n) => n + 1)}
          />
        </div>
        <div>
          <LiveRecords topic={name} />
        </div>
      </div>
      <Browser topic={name} partitions={topic.data?.info.partitions_count ?? 1} />
    </section>
  );
}

/** `name: value` per line; a line without a colon is a header without a value. */
function parseHeaders(text: string): { key: string; value: string | null }[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .map((l) => {
      const colon = l.indexOf(':');
      return colon < 0
        ? { key: l, value: null }
        : { key: l.slice(0, colon).trim(), value: l.slice(colon + 1).trim() };
    });
}

function ProduceForm(props: { topic: string; partitions: number; onProduced: () => void }) {
  const [key, setKey] = useState('');
  const [value, setValue] = useState('{\n  \n}');
  const [partition, setPartition] = useState('');
  const [headers, setHeaders] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const action = useAction<string>();
  const submit = async () => {
    const parsed = parseJsonInput(value);
    if (!parsed.ok) return setError(parsed.error);
    if (typeof parsed.value !== 'object' || parsed.value === null || Array.isArray(parsed.value))
      return setError('The value must be a JSON object.');
    setError(undefined);
    const record: Record<string, unknown> = { value: parsed.value };
    if (key !== '') record.key = key;
    if (partition !== '') record.partition = Number(partition);
    const headerList = parseHeaders(headers);
    if (headerList.length > 0) record.headers = headerList;
    await action.run(async () => {
      const at = (await produce(props.topic, [record])).offsets[0];
      props.onProduced();
      return at ? `Stored at partition ${at.partition}, offset ${at.offset}.` : 'Stored.';
    });
  };
  return (
    <>
      <h2>Produce a record</h2>
      <Form label="Produce a record" onSubmit={submit} submitLabel="Produce" busy={action.busy}>
        <div class="form-row">
          <TextField
            label="Key"
            name="key"
            value={key}
            onValue={setKey}
            hint="Optional; keyed records go to the key's partition."
          />
          <SelectField
            label="Partition"
            name="partition"
            value={partition}
            onValue={setPartition}
            options={[
              { value: '', label: 'by key / round robin' },
              ...Array.from({ length: props.partitions }, (_, p) => String(p)),
            ]}
          />
        </div>
        <TextArea
          label="Value (JSON object)"
          name="value"
          rows={5}
          value={value}
          onValue={setValue}
          error={error}
        />
        <TextArea
          label="Headers"
          name="headers"
          rows={2}
          value={headers}
          onValue={setHeaders}
          hint="One per line: name: value"
        />
      </Form>
      {action.failure ? <ErrorBox error={action.failure} context="Producing" service="streams" /> : null}
      {action.result ? <p role="status">{action.result}</p> : null}
    </>
  );
}

function Browser(props: { topic: string; partitions: number }) {
  const [partition, setPartition] = useState('0');
  const [mode, setMode] = useState<'tail' | 'beginning' | 'offset' | 'time'>('tail');
  const [offset, setOffset] = useState('0');
  const [time, setTime] = useState('');
  const [count, setCount] = useState('20');
  const [error, setError] = useState<string | undefined>(undefined);
  const action = useAction<{ records: StreamRecord[]; tail: boolean }>();
  const submit = async () => {
    let from: { offset: number } | { timestamp: number } | undefined;
    const n = Math.max(1, Number(count) || 20);
    if (mode === 'tail') {
      setError(undefined);
      await action.run(async () => {
        // The newest records: the partition's current end, read back `n` records from it.
        const info = await describeTopic(props.topic);
        const p = info.partitions.find((x) => x.partition === Number(partition));
        const start = p ? tailOffset(p.beginning_offset, p.end_offset, n) : 0;
        const records = await readPartition(props.topic, Number(partition), { offset: start }, n);
        return { records, tail: true };
      });
      return;
    }
    if (mode === 'offset') {
      if (!/^\d+$/.test(offset)) return setError('The offset is a whole number.');
      from = { offset: Number(offset) };
    } else if (mode === 'time') {
      const ms = Date.parse(time);
      if (Number.isNaN(ms)) return setError('Pick a date and time.');
      from = { timestamp: ms };
    }
    setError(undefined);
    await action.run(async () => ({
      records: await readPartition(props.topic, Number(partition), from, n),
      tail: false,
    }));
  };
  return (
    <>
      <h2>Browse records</h2>
      <Form label="Browse records" onSubmit={submit} submitLabel="Show records" busy={action.busy}>
        <div class="form-row">
          <SelectField
            label="Partition"
            name="browse-partition"
            value={partition}
            onValue={setPartition}
            options={Array.from({ length: props.partitions }, (_, p) => String(p))}
          />
          <SelectField
            label="Start at"
            name="start"
            value={mode}
            onValue={(v) => setMode(v as typeof mode)}
            options={[
              { value: 'tail', label: 'the newest (tail), newest first' },
              { value: 'beginning', label: 'the beginning' },
              { value: 'offset', label: 'an offset' },
              { value: 'time', label: 'a time' },
            ]}
          />
          {mode === 'offset' ? (
            <TextField
              label="Offset"
              name="offset"
              type="number"
              min={0}
              value={offset}
              onValue={setOffset}
              error={error}
            />
          ) : null}
          {mode === 'time' ? (
            <TextField
              label="From time (local)"
              name="time"
              type="datetime-local"
              value={time}
              onValue={setTime}
              error={error}
            />
          ) : null}
          <TextField label="Count" name="count" type="number" min={1} value={count} onValue={setCount} />
        </div>
      </Form>
      {action.failure ? (
        <ErrorBox error={action.failure} context="Reading records" service="streams" />
      ) : null}
      {action.result ? (
        <RecordTable
          id="read"
          records={action.result.records}
          caption={action.result.tail ? 'Records read, newest first' : 'Records read'}
          newest={action.result.tail}
        />
      ) : null}
    </>
  );
}

function LiveRecords({ topic }: { topic: string }) {
  const [on, setOn] = useState(false);
  const [records, setRecords] = useState<StreamRecord[]>([]);
  const [problem, setProblem] = useState<unknown>(undefined);
  useEffect(() => {
    if (!on) return;
    let live: { stop: () => void } | undefined;
    let cancelled = false;
    followTopic(
      topic,
      (batch) => setRecords((old) => [...batch.slice().reverse(), ...old].slice(0, LIVE_KEEP)),
      (message) => setProblem(new Error(message)),
    ).then(
      (handle) => {
        if (cancelled) handle.stop();
        else live = handle;
      },
      (error: unknown) => setProblem(error),
    );
    return () => {
      cancelled = true;
      live?.stop();
    };
  }, [on, topic]);
  return (
    <>
      <h2>Live records</h2>
      <Checkbox label="Follow new records as they are produced" checked={on} onValue={setOn} />
      {problem ? <ErrorBox error={problem} context="Live records" service="streams" /> : null}
      {on ? <RecordTable id="live" records={records} caption="Live records, newest first" newest /> : null}
    </>
  );
}
