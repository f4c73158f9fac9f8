// The model provider behind the service's llm-judge evaluators. A judge config names its model
// (`config.model`); when it names none, AUTOMATION_JUDGE_MODEL does, and failing that the
// agents' AUTOMATION_OPENAI_MODEL when the OpenAI-compatible provider is configured.
// `deterministic` (or `builtin:judge`) is the offline judge and is used only when chosen so;
// any other name goes to the OpenAI-compatible /chat/completions endpoint the agents use.
import {
  adaptToolChatProvider,
  DeterministicJudgeProvider,
  EvaluatorError,
  type ChatMessage,
  type CompletionOptions,
  type CompletionUsage,
  type ModelProvider,
} from '../evals/index.js';
import { OpenAiCompatibleProvider } from '../executor/runtime/providers.js';

export interface JudgeSettings {
  readonly openaiBaseUrl: string | undefined;
  readonly openaiApiKey: string | undefined;
  readonly openaiModel: string | undefined;
  readonly judgeModel: string | undefined;
}

export const DETERMINISTIC_JUDGE_MODELS: ReadonlySet<string> = new Set(['deterministic', 'builtin:judge']);

export function createJudgeProvider(s: JudgeSettings): ModelProvider {
  const deterministic = new DeterministicJudgeProvider();
  return {
    async complete(
      messages: readonly ChatMessage[],
      opts: CompletionOptions,
    ): Promise<{ text: string; usage: CompletionUsage; model?: string }> {
      const model = opts.model ?? s.judgeModel ?? (s.openaiBaseUrl === undefined ? undefined : s.openaiModel);
      if (model === undefined) {
        throw new EvaluatorError(
          'llm-judge has no model: name one in config.model or AUTOMATION_JUDGE_MODEL (with the ' +
            'OpenAI-compatible provider at AUTOMATION_OPENAI_BASE_URL), or choose "model: deterministic" ' +
            'for the built-in offline judge',
        );
      }
      if (DETERMINISTIC_JUDGE_MODELS.has(model)) {
        return { ...(await deterministic.complete(messages, opts)), model: 'deterministic' };
      }
      if (s.openaiBaseUrl === undefined) {
        throw new EvaluatorError(
          `llm-judge model "${model}" needs the OpenAI-compatible provider, and AUTOMATION_OPENAI_BASE_URL is not set`,
        );
      }
      const name = model.startsWith('openai:') ? model.slice('openai:'.length) : model;
      const provider = new OpenAiCompatibleProvider(name, s.openaiBaseUrl, s.openaiApiKey);
      return adaptToolChatProvider(provider).complete(messages, opts);
    },
  };
}
