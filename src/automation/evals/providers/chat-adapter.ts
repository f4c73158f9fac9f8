// Lets the judge use an agent model provider of the automation runtime
// (src/automation/executor/runtime/providers.ts), whose call shape is tool-oriented:
// complete({ messages, tools, signal }) → { content, usage: { input, output } }. The shape is
// restated here structurally so this library does not depend on the executor's modules.
import type { ChatMessage, CompletionOptions, CompletionUsage, ModelProvider } from '../types.js';

export interface ToolChatProvider {
  readonly model?: string;
  complete(request: {
    messages: { role: 'system' | 'user'; content: string }[];
    tools: [];
    signal: AbortSignal;
    temperature?: number;
    maxTokens?: number;
  }): Promise<{ content: string | null; usage: { input: number; output: number } }>;
}

export function adaptToolChatProvider(provider: ToolChatProvider): ModelProvider {
  return {
    async complete(
      messages: readonly ChatMessage[],
      opts: CompletionOptions,
    ): Promise<{ text: string; usage: CompletionUsage; model?: string }> {
      // A judge conversation has no assistant turns, so the narrower role set suffices.
      const plain = messages.map((m) => ({
        role: m.role === 'system' ? ('system' as const) : ('user' as const),
        content: m.content,
      }));
      const reply = await provider.complete({
        messages: plain,
        tools: [],
        signal: opts.signal ?? new AbortController().signal,
        ...(opts.temperature === undefined ? {} : { temperature: opts.temperature }),
        ...(opts.maxTokens === undefined ? {} : { maxTokens: opts.maxTokens }),
      });
      return {
        text: reply.content ?? '',
        usage: { inputTokens: reply.usage.input, outputTokens: reply.usage.output },
        ...(provider.model === undefined ? {} : { model: provider.model }),
      };
    },
  };
}
