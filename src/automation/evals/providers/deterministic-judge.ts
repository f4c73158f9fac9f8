// A ModelProvider that needs no network and always gives the same answer to the same prompt:
// it reads the <output> and <expected> sections of a judge prompt and grades by normalised
// edit-distance similarity of their canonical JSON. Tests and docs use it; production
// configures a real model provider through the same interface.
import { similarity } from '../levenshtein.js';
import type { ChatMessage, CompletionOptions, CompletionUsage, ModelProvider } from '../types.js';

function section(text: string, tag: string): unknown {
  const m = new RegExp(`<${tag}>\\n([\\s\\S]*?)\\n</${tag}>`).exec(text);
  if (m?.[1] === undefined) return undefined;
  try {
    return JSON.parse(m[1]) as unknown;
  } catch {
    return undefined;
  }
}

/** JSON text with object keys sorted, so key order does not count as a difference. */
function canonical(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value, (_k, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    );
  });
}

const round = (x: number): number => Math.round(x * 1e6) / 1e6;
const tokens = (s: string): number => Math.ceil(s.length / 4);

export class DeterministicJudgeProvider implements ModelProvider {
  readonly model = 'builtin:judge';

  async complete(
    messages: readonly ChatMessage[],
    opts: CompletionOptions,
  ): Promise<{ text: string; usage: CompletionUsage }> {
    opts.signal?.throwIfAborted();
    const prompt = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    const output = section(prompt, 'output');
    const expected = section(prompt, 'expected');
    const labels = section(prompt, 'labels') as Record<string, number> | undefined;
    let score: number;
    let reason: string;
    if (expected === undefined) {
      const empty =
        output === undefined ||
        output === null ||
        output === '' ||
        (typeof output === 'object' && Object.keys(output).length === 0);
      score = empty ? 0 : 1;
      reason = empty ? 'the output is empty' : 'no reference was given and the output is not empty';
    } else {
      score = round(similarity(canonical(output), canonical(expected)).similarity);
      reason = `textual similarity to the expected output is ${score}`;
    }
    const reply: Record<string, unknown> = { score, reason };
    if (labels !== undefined && Object.keys(labels).length > 0) {
      // The label whose score is nearest; on a tie the higher-scoring label wins.
      const [label] = Object.entries(labels).sort(
        ([, a], [, b]) => Math.abs(a - score) - Math.abs(b - score) || b - a,
      )[0]!;
      reply.label = label;
    }
    const text = JSON.stringify(reply);
    const inputChars = messages.reduce((n, m) => n + m.content.length, 0);
    return { text, usage: { inputTokens: Math.ceil(inputChars / 4), outputTokens: tokens(text) } };
  }
}
