// The service's llm-judge calls the OpenAI-compatible provider the agents use (a local
// node:http server here), and the deterministic judge only when a config chooses it.
import * as assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ServiceClient } from '../../src/automation/client/index.js';
import type { EvalResult } from '../../src/automation/client/types.js';
import { createJudgeProvider } from '../../src/automation/evaluators/judge-provider.js';
import { startHarness, type Harness } from './harness.js';

const A = 'workflows.text-report';
const CRITERIA = 'The text is the one that was asked for, unchanged.';

interface Received {
  url: string;
  authorization: string | undefined;
  body: { model: string; messages: { role: string; content: string }[]; temperature?: number };
}

let server: Server;
let baseUrl: string;
const received: Received[] = [];
/** What the fake provider answers next: a status and a JSON body. */
let answer: { status: number; body: unknown } = { status: 200, body: {} };

before(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        url: req.url ?? '',
        authorization: req.headers.authorization,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Received['body'],
      });
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

function completion(content: string) {
  return {
    choices: [{ message: { role: 'assistant', content } }],
    usage: { prompt_tokens: 120, completion_tokens: 9 },
  };
}

describe('llm-judge in the automation service', () => {
  let h: Harness;
  let client: ServiceClient;
  before(async () => {
    h = await startHarness({ AUTOMATION_OPENAI_BASE_URL: baseUrl, AUTOMATION_OPENAI_API_KEY: 'judge-key' });
    client = new ServiceClient({ api_key: h.token, base_url: h.url, env: {} });
  });
  after(async () => {
    await h?.close();
  });

  /** Stores the config, runs one example through an experiment and returns its one result. */
  async function judge(
    config: string,
    text: string,
  ): Promise<EvalResult & { details: Record<string, unknown> }> {
    await client.automations.evaluators.put(
      A,
      `evaluators:\n  - name: judge\n    type: llm-judge\n    path: /text\n    config: { promptExtension: '${CRITERIA}'${config} }\n`,
    );
    const ex = await client.automations.examples.create(A, {
      name: `judge-${received.length}-${Math.random().toString(36).slice(2, 8)}`,
      input: { text },
      expected: { text },
    });
    const events: { runId?: string | null }[] = [];
    for await (const e of client.experiments.stream(A, { examples: [ex.id] })) events.push(e);
    assert.equal(events.length, 1);
    const { scores } = await client.runs.scores(events[0]!.runId!);
    assert.equal(scores?.length, 1);
    const result = scores[0]!;
    return { ...result, details: result.details as Record<string, unknown> };
  }

  it('sends the model and the prompt to the provider and scores with its answer', async () => {
    answer = { status: 200, body: completion('{"score": 0.42, "reason": "close enough"}') };
    const before = received.length;
    const r = await judge(', model: judge-model-x', 'alpha beta');
    assert.equal(received.length, before + 1);
    const req = received.at(-1)!;
    assert.equal(req.url, '/v1/chat/completions');
    assert.equal(req.authorization, 'Bearer judge-key');
    assert.equal(req.body.model, 'judge-model-x');
    assert.equal(req.body.temperature, 0);
    const prompt = req.body.messages.map((m) => m.content).join('\n');
    assert.ok(prompt.includes(CRITERIA), prompt);
    assert.ok(prompt.includes('<output>\n"alpha beta"\n</output>'), prompt);
    assert.equal(r.error, null);
    assert.equal(r.score, 0.42);
    assert.equal(r.details['model'], 'judge-model-x');
    assert.equal(r.details['reason'], 'close enough');
    assert.deepEqual(r.details['usage'], { inputTokens: 120, outputTokens: 9 });
  });

  it('turns a provider error into an evaluator error', async () => {
    answer = { status: 500, body: { error: { message: 'the model is overloaded' } } };
    const r = await judge(', model: judge-model-x', 'alpha beta');
    assert.equal(r.score, 0);
    assert.equal(r.passed, false);
    assert.match(String(r.error), /model provider .* answered 500: .*overloaded/);
  });

  it('uses the deterministic judge only when the config chooses it, without calling the provider', async () => {
    const before = received.length;
    const r = await judge(', model: deterministic', 'alpha beta');
    assert.equal(received.length, before);
    assert.equal(r.error, null);
    assert.equal(r.score, 1);
    assert.equal(r.details['model'], 'deterministic');
  });

  it('says so when no model is named anywhere', async () => {
    const before = received.length;
    const r = await judge('', 'alpha beta');
    assert.equal(received.length, before);
    assert.match(String(r.error), /llm-judge has no model/);
  });
});

describe('createJudgeProvider', () => {
  const messages = [
    { role: 'user' as const, content: '<output>\n"a"\n</output>\n<expected>\n"a"\n</expected>' },
  ];

  it('takes AUTOMATION_JUDGE_MODEL, then AUTOMATION_OPENAI_MODEL, for configs that name no model', async () => {
    answer = { status: 200, body: completion('{"score": 1}') };
    const s = {
      openaiBaseUrl: baseUrl,
      openaiApiKey: undefined,
      openaiModel: 'agent-model',
      judgeModel: undefined,
    };
    await createJudgeProvider(s).complete(messages, {});
    assert.equal(received.at(-1)!.body.model, 'agent-model');
    assert.equal(received.at(-1)!.authorization, undefined);
    await createJudgeProvider({ ...s, judgeModel: 'judge-default' }).complete(messages, {});
    assert.equal(received.at(-1)!.body.model, 'judge-default');
    const offline = await createJudgeProvider({ ...s, judgeModel: 'deterministic' }).complete(messages, {});
    assert.equal(offline.model, 'deterministic');
  });

  it('refuses a named model when no provider is configured', async () => {
    const none = {
      openaiBaseUrl: undefined,
      openaiApiKey: undefined,
      openaiModel: 'agent-model',
      judgeModel: undefined,
    };
    await assert.rejects(
      createJudgeProvider(none).complete(messages, { model: 'gpt-x' }),
      /AUTOMATION_OPENAI_BASE_URL is not set/,
    );
    // The agents' model does not apply without the provider it belongs to.
    await assert.rejects(createJudgeProvider(none).complete(messages, {}), /has no model/);
  });
});
