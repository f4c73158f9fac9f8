// The llm-judge conversation: what the model is asked, and how its reply becomes a score.
// Values are embedded as JSON with "<" escaped, so the section tags cannot occur inside them
// and a reader (the deterministic provider, or a human in a trace) can split them reliably.
import { EvaluatorError } from './subject.js';
import type { ChatMessage, LlmJudgeSpec } from './types.js';

export function embedJson(value: unknown): string {
  return (JSON.stringify(value ?? null, null, 2) ?? 'null').replace(/</g, '\\u003c');
}

export function buildJudgeMessages(
  spec: LlmJudgeSpec,
  output: unknown,
  expected: unknown,
  input: unknown,
): ChatMessage[] {
  const discrete = spec.mode === 'discrete';
  const answer = discrete
    ? '{"label": "<one of the labels>", "reason": "<one or two sentences>"}'
    : '{"score": <number from 0 to 1>, "label": "<optional short label>", "reason": "<one or two sentences>"}';
  const system = [
    'You are an impartial evaluator. You grade the output of an automation against the criteria,',
    'using the expected output as the reference when one is given.',
    discrete
      ? 'Choose exactly one label from <labels> (label → score).'
      : 'Give a score from 0 (fails the criteria) to 1 (fully meets them).',
    `Reply with a single JSON object and nothing else: ${answer}`,
  ].join(' ');
  const sections = [`Criteria:\n${spec.promptExtension}`];
  if (Object.keys(spec.labels).length > 0) sections.push(`<labels>\n${embedJson(spec.labels)}\n</labels>`);
  if (spec.includeInput) sections.push(`<input>\n${embedJson(input)}\n</input>`);
  if (expected !== undefined) sections.push(`<expected>\n${embedJson(expected)}\n</expected>`);
  sections.push(`<output>\n${embedJson(output)}\n</output>`);
  return [
    { role: 'system', content: system },
    { role: 'user', content: sections.join('\n\n') },
  ];
}

function extractObject(text: string): Record<string, unknown> {
  const candidates = [text.trim()];
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text);
  if (fenced?.[1] !== undefined) candidates.push(fenced[1].trim());
  const first = text.indexOf('{');
  const last = text.lastIndexOf('}');
  if (first >= 0 && last > first) candidates.push(text.slice(first, last + 1));
  for (const c of candidates) {
    try {
      const v: unknown = JSON.parse(c);
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
    } catch {
      // try the next candidate
    }
  }
  throw new EvaluatorError('the judge reply holds no JSON object', { reply: text.slice(0, 500) });
}

export interface JudgeVerdict {
  readonly score: number;
  readonly label: string | null;
  readonly reason: string | null;
}

export function parseJudgeReply(spec: LlmJudgeSpec, text: string): JudgeVerdict {
  const obj = extractObject(text);
  const reason = typeof obj.reason === 'string' ? obj.reason.slice(0, 2000) : null;
  if (spec.mode === 'discrete') {
    if (typeof obj.label !== 'string')
      throw new EvaluatorError('the judge reply has no "label"', { reply: text.slice(0, 500) });
    const wanted = obj.label.trim();
    const key =
      Object.keys(spec.labels).find((l) => l === wanted) ??
      Object.keys(spec.labels).find((l) => l.toLowerCase() === wanted.toLowerCase());
    if (key === undefined) {
      throw new EvaluatorError(
        `the judge answered label "${wanted}", which is not one of ${Object.keys(spec.labels).join(', ')}`,
        { reply: text.slice(0, 500) },
      );
    }
    return { score: spec.labels[key]!, label: key, reason };
  }
  const score = obj.score;
  if (typeof score !== 'number' || !Number.isFinite(score) || score < 0 || score > 1) {
    throw new EvaluatorError(
      `the judge answered score ${JSON.stringify(score)}; a number in [0,1] was asked for`,
      { reply: text.slice(0, 500) },
    );
  }
  return { score, label: typeof obj.label === 'string' ? obj.label.slice(0, 200) : null, reason };
}
