// One topic: partitions with offsets and rates, a produce form, a record browser (partition;
// the tail, the beginning, an offset or a time; count) and live records over the push WebSocket,
// with its state (connecting, connected, paused with the records held, closed). The topic's size
// is counted in records (end minus beginning offsets): the streams API reports no byte size.

import { Fragment } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ErrorBox } from '../ui/error-box.js';
import { Checkbox, Form, parseJsonInput, SelectField, TextArea, TextField } from '../ui/forms.js';
import { useAction, useLoad } from '../ui/hooks.js';
import { Table } from '../ui/table.js';
import {
  describeTopic,
  produce,
  readPartition,
  type PartitionInfo,
  type StreamRecord,
  type TopicInfo,
} from './api.js';
import { followTopic, type LiveStatus } from './live.js';
import { PositionFields, usePositionInput, type Position } from './position-fields.js';
import { tailOffset } from './record-filter.js';
import { fmtDuration } from '../ui/time-format.js';
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
      {topic.data ? <TopicFacts info={topic.data.info} /> : null}
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

/** A retention config as a person reads it: -1 is unlimited, times and sizes in units. */
export function configText(name: string, value: string): string {
  const n = Number(value);
  if (value === '-1') return 'unlimited';
  if (!Number.isFinite(n)) return value;
  if (name.endsWith('.ms')) return fmtDuration(n);
  if (name.endsWith('.bytes')) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let v = n;
    let i = 0;
    while (v >= 1024 && i < units.length - 1) {
      v /= 1024;
      i++;
    }
    return `${Number.isInteger(v) ? v : v.toFixed(1)} ${units[i]}`;
  }
  return value;
}

function TopicFacts({ info }: { info: TopicInfo }) {
  const kept = info.partitions.reduce((sum, p) => sum + (p.end_offset - p.beginning_offset), 0);
  return (
    <dl class="facts" aria-label="Topic summary" data-testid="topic-facts">
      <dt>Partitions</dt>
      <dd>{info.partitions_count}</dd>
      <dt>Records kept</dt>
      <dd data-testid="records-kept">{kept}</dd>
      {(info.configs ?? []).map((c) => (
        <Fragment key={c.name}>
          <dt>
            <code>{c.name}</code>
          </dt>
          <dd title={c.value} data-config={c.name}>
            {configText(c.name, c.value)}
          </dd>
        </Fragment>
      ))}
    </dl>
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
  const position = usePositionInput();
  const [count, setCount] = useState('20');
  const action = useAction<{ records: StreamRecord[]; tail: boolean }>();
  const submit = async () => {
    let from: Position | undefined;
    const n = Math.max(1, Number(count) || 20);
    if (mode === 'tail') {
      position.clearError();
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
    if (mode === 'offset' || mode === 'time') {
      from = position.read(mode);
      if (!from) return;
    }
    position.clearError();
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
          <PositionFields mode={mode} input={position} name="" timeLabel="From time (local)" />
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

type LiveState = 'off' | LiveStatus | 'paused';

const LIVE_WORDS: Record<LiveState, string> = {
  off: 'Not following.',
  connecting: 'Connecting…',
  connected: 'Connected: new records appear as they are produced.',
  paused: 'Paused: new records are held until you resume.',
  reconnecting: 'Reconnecting: the live stream dropped; it resumes after the last record shown.',
  closed: 'Closed: the live stream ended (see the message above). Follow again to reconnect.',
};

function LiveRecords({ topic }: { topic: string }) {
  const [on, setOn] = useState(false);
  const [state, setState] = useState<LiveState>('off');
  const [paused, setPaused] = useState(false);
  const [records, setRecords] = useState<StreamRecord[]>([]);
  const [held, setHeld] = useState<StreamRecord[]>([]);
  const [problem, setProblem] = useState<unknown>(undefined);
  const [dropped, setDropped] = useState<string | undefined>(undefined);
  // Read by the socket's callbacks, which outlive renders.
  const pausedRef = useRef(false);
  pausedRef.current = paused;
  useEffect(() => {
    if (!on) {
      setState('off');
      return;
    }
    setProblem(undefined);
    const live = followTopic(topic, {
      onRecords: (batch) => {
        const newest = batch.slice().reverse();
        if (pausedRef.current) setHeld((old) => [...newest, ...old].slice(0, LIVE_KEEP));
        else setRecords((old) => [...newest, ...old].slice(0, LIVE_KEEP));
      },
      onStatus: (status, detail) => {
        if (status === 'closed') setProblem(new Error(detail ?? 'the live stream closed'));
        setDropped(status === 'reconnecting' ? detail : undefined);
        setState(status === 'connected' && pausedRef.current ? 'paused' : status);
      },
    });
    return () => live.stop();
  }, [on, topic]);
  const togglePause = () => {
    if (paused) {
      setRecords((old) => [...held, ...old].slice(0, LIVE_KEEP));
      setHeld([]);
    }
    setPaused(!paused);
    setState((s) => (s === 'connected' && !paused ? 'paused' : s === 'paused' && paused ? 'connected' : s));
  };
  return (
    <>
      <h2>Live records</h2>
      <Checkbox label="Follow new records as they are produced" checked={on} onValue={setOn} />
      <p role="status" class={`live-state live-${state}`} data-testid="live-state" data-state={state}>
        {LIVE_WORDS[state]}
        {state === 'paused' && held.length > 0
          ? ` ${held.length} new record${held.length === 1 ? '' : 's'} held.`
          : ''}
        {state === 'reconnecting' && dropped ? ` (${dropped})` : ''}
      </p>
      {on && (state === 'connected' || state === 'paused') ? (
        <button type="button" onClick={togglePause} aria-pressed={paused}>
          {paused ? 'Resume' : 'Pause'}
        </button>
      ) : null}
      {problem ? <ErrorBox error={problem} context="Live records" service="streams" /> : null}
      {on ? <RecordTable id="live" records={records} caption="Live records, newest first" newest /> : null}
    </>
  );
}
