// Valid-ish material so that cases get past the first validation layer: real resources made
// before the run (a topic with records, a consumer instance, a finished run, a file, a dataset
// example) and a seed body per route. Path parameters are pooled by the static segment before
// them and their name (`runs/id`, `topics/topic`), which is how the route tables name them.

export interface Seeds {
  /** `<previous static segment>/<param>` → real values. */
  readonly params: Map<string, string[]>;
  /** Body property or query parameter name → real values (for the schema sampler). */
  readonly strings: Map<string, string[]>;
  /** `<service> <METHOD> <pattern>` → seed bodies. */
  readonly bodies: Map<string, unknown[]>;
}

export interface SeedTarget {
  readonly url: string;
  readonly token: string;
}

function add<T>(map: Map<string, T[]>, key: string, ...values: T[]): void {
  const list = map.get(key) ?? [];
  for (const v of values) if (v !== undefined && v !== null && !list.includes(v)) list.push(v);
  map.set(key, list);
}

async function call(
  target: SeedTarget,
  method: string,
  path: string,
  body?: unknown,
  type = 'application/json',
): Promise<{ status: number; json: any }> {
  const init: RequestInit = { method, headers: { authorization: `Bearer ${target.token}` } };
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = type;
  }
  const res = await fetch(target.url + path, init);
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json };
}

export function emptySeeds(): Seeds {
  return { params: new Map(), strings: new Map(), bodies: new Map() };
}

/** `domain` should name a domain of the loaded configuration, for decisions past validation. */
export function ratelimitSeeds(seeds: Seeds, domain: string): void {
  add(
    seeds.bodies,
    'ratelimit POST /json',
    {
      domain,
      descriptors: [{ entries: [{ key: 'fuzz', value: 'a' }] }],
    },
    {
      domain,
      descriptors: [
        {
          entries: [
            { key: 'fuzz', value: 'b' },
            { key: 'path', value: '/x' },
          ],
        },
      ],
      hits_addend: 1,
    },
    {
      domain,
      descriptors: [
        { entries: [{ key: 'fuzz', value: 'c' }], limit: { requests_per_unit: 5, unit: 'SECOND' } },
      ],
      hitsAddend: '2',
    },
  );
}

export async function streamsSeeds(seeds: Seeds, target: SeedTarget, tag: string): Promise<void> {
  const topic = `fuzz-${tag}`;
  const group = `fuzz-group-${tag}`;
  const created = await call(target, 'POST', '/streams/topics/topic', { topic_name: topic, partitions: 2 });
  // 400 40002: the topic exists already (a second run with the same seed).
  if (created.status !== 200 && created.status !== 400)
    throw new Error(`streams seed: creating topic ${topic} answered ${created.status}`);
  await call(target, 'POST', `/streams/topic/${topic}`, {
    records: [
      { key: 'k', value: { n: 1 } },
      { value: { n: 2 }, partition: 1 },
    ],
  });
  const consumer = await call(target, 'POST', `/streams/consumers/${group}`, {
    'auto.offset.reset': 'earliest',
  });
  const instance = consumer.json?.instance_id as string | undefined;
  if (instance)
    await call(target, 'POST', `/streams/consumers/${group}/instances/${instance}/subscription`, {
      topics: [topic],
    });

  add(seeds.params, 'topics/topic', topic, 'topic');
  add(seeds.params, 'topic/topic', topic);
  add(seeds.params, 'partitions/partition', '0', '1');
  add(seeds.params, 'consumers/group', group);
  if (instance) add(seeds.params, 'instances/instance', instance);

  const instancePath = '/streams/consumers/:group/instances/:instance';
  const tp = { topic, partition: 0 };
  const body = (method: string, pattern: string, ...values: unknown[]) =>
    add(seeds.bodies, `streams ${method} ${pattern}`, ...values);
  body(
    'POST',
    '/streams/topics/topic',
    { topic_name: `${topic}-new`, partitions: 1 },
    { topic_name: topic, partitions_count: 2 },
  );
  body('POST', '/topics/topic', { topic_name: `${topic}-other` });
  body(
    'POST',
    '/streams/topic/:topic',
    { records: [{ key: 'k', value: { a: 1 } }] },
    {
      records: [{ value: { b: [1, 2] }, partition: 0, timestamp: 1, headers: [{ key: 'h', value: 'v' }] }],
    },
  );
  body(
    'POST',
    '/streams/consumers/:group',
    { 'auto.offset.reset': 'earliest', format: 'json' },
    {
      'auto.commit.enable': 'false',
      'consumer.request.timeout.ms': 10,
    },
  );
  body('POST', `${instancePath}/subscription`, { topics: [topic] });
  body('POST', `${instancePath}/offsets`, { offsets: [{ ...tp, offset: 0 }] });
  body('GET', `${instancePath}/offsets`, { partitions: [tp] });
  body('POST', `${instancePath}/positions`, { offsets: [{ ...tp, offset: 1 }] });
  body('POST', `${instancePath}/positions/beginning`, { partitions: [tp] });
  body('POST', `${instancePath}/positions/end`, { partitions: [tp] });
}

export async function automationSeeds(seeds: Seeds, target: SeedTarget): Promise<void> {
  const api = (method: string, path: string, body?: unknown) => call(target, method, `/api/v1${path}`, body);
  const list = await api('GET', '/automations?limit=50');
  if (list.status !== 200) throw new Error(`automation seed: listing automations answered ${list.status}`);
  // The typed alias (`workflows.<slug>`) is built here: the list answers the SDK's summary shape.
  const automations = ((list.json?.data ?? []) as { id: string; slug: string; type: string }[]).map((a) => ({
    ...a,
    alias: `${a.type}s.${a.slug}`,
  }));
  for (const a of automations) add(seeds.params, 'automations/id', a.id, a.alias);
  add(seeds.strings, 'target', ...automations.map((a) => a.alias));
  const workflow = automations.find((a) => a.alias === 'workflows.text-report') ?? automations[0];
  if (!workflow) return;

  add(seeds.bodies, 'automation POST /api/v1/runs', { target: workflow.alias, input: { text: 'fuzz' } });
  const run = await api('POST', '/runs?wait_for_completion=60', {
    target: workflow.alias,
    input: { text: 'fuzz seed' },
  });
  const runId = run.json?.id as string | undefined;
  if (runId) {
    add(seeds.params, 'runs/id', runId);
    add(seeds.strings, 'runId', runId);
    const artifacts = await api('GET', `/runs/${runId}/artifacts`);
    for (const a of (artifacts.json?.data ?? artifacts.json?.artifacts ?? []) as { path?: string }[])
      if (a.path) add(seeds.params, 'artifacts/path', a.path);
  }
  const form = new FormData();
  form.append('file', new Blob(['fuzz file']), 'fuzz.txt');
  const file = await call(target, 'POST', '/api/v1/files', form);
  const fileId = (file.json?.id ?? file.json?.data?.id) as string | undefined;
  if (fileId) add(seeds.params, 'files/id', fileId);

  const example = await api('POST', `/automations/${workflow.alias}/examples`, {
    name: 'fuzz',
    input: { text: 'x' },
    expected: { text: 'x' },
  });
  const exampleId = example.json?.id as string | undefined;
  if (exampleId) {
    add(seeds.params, 'examples/exampleId', exampleId);
    add(seeds.strings, 'example_id', exampleId);
  }
  add(seeds.params, 'expected/filename', 'expected.json');
  add(seeds.params, 'input/path', 'input.json');
  add(seeds.params, 'expected/path', 'expected.json');
  const experiments = await api('GET', `/automations/${workflow.alias}/experiments`);
  for (const e of (experiments.json?.data ?? []) as { id?: string }[])
    if (e.id) add(seeds.params, 'experiments/experimentId', e.id);
}
