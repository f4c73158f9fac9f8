import { resolvePointer } from '../json-pointer.js';
import { buildJudgeMessages, parseJudgeReply } from '../judge-prompt.js';
import { EvaluatorError, type ScoreInput } from '../subject.js';
import type { LlmJudgeSpec, ModelProvider, ScorerOutcome } from '../types.js';

export async function scoreLlmJudge(
  spec: LlmJudgeSpec,
  data: ScoreInput,
  provider: ModelProvider | undefined,
  signal: AbortSignal | undefined,
): Promise<ScorerOutcome> {
  if (provider === undefined) throw new EvaluatorError('no model provider is configured for llm-judge');
  const output = resolvePointer(data.output, spec.path);
  // Like the other evaluators, a missing value fails without asking anyone.
  if (output === undefined)
    return { score: 0, details: { path: spec.path, reason: 'no output value at path' } };
  const expected = spec.path === '' ? data.expected : resolvePointer(data.expected, spec.path);
  const messages = buildJudgeMessages(spec, output, expected, data.input);
  const timeout = AbortSignal.timeout(spec.timeoutMs);
  const combined = signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
  let timer: NodeJS.Timeout | undefined;
  // A provider that ignores the signal still cannot hold scoring past the time limit.
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new EvaluatorError(`the model provider did not answer within ${spec.timeoutMs} ms`)),
      spec.timeoutMs,
    );
  });
  let reply: Awaited<ReturnType<ModelProvider['complete']>>;
  try {
    reply = await Promise.race([
      provider.complete(messages, {
        ...(spec.model === null ? {} : { model: spec.model }),
        maxTokens: 512,
        temperature: 0,
        signal: combined,
      }),
      deadline,
    ]);
  } catch (err) {
    if (err instanceof EvaluatorError) throw err;
    throw new EvaluatorError(
      `the model provider failed: ${err instanceof Error ? err.message : String(err)}`,
    );
  } finally {
    clearTimeout(timer);
  }
  const verdict = parseJudgeReply(spec, reply.text);
  const details: Record<string, unknown> = { mode: spec.mode, usage: reply.usage };
  if (verdict.reason !== null) details.reason = verdict.reason;
  const model = reply.model ?? spec.model;
  if (model !== null) details.model = model;
  return verdict.label === null
    ? { score: verdict.score, details }
    : { score: verdict.score, label: verdict.label, details };
}
