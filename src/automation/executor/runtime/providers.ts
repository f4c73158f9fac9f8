// Model providers for agents. `builtin:echo` is deterministic and offline (tests, examples);
// `openai:<model>` speaks the OpenAI-compatible /chat/completions protocol with tool calls.

import type { ProviderSettings } from '../protocol.js';

export interface ChatToolCall {
  id: string;
  name: string;
  arguments: unknown;
}

export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls?: ChatToolCall[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string };

export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface Completion {
  content: string | null;
  toolCalls: ChatToolCall[];
  usage: { input: number; output: number };
}

export interface CompletionRequest {
  messages: ChatMessage[];
  tools: ToolSpec[];
  signal: AbortSignal;
  /** Sent as `temperature` / `max_tokens` when given (the evaluator judge asks for 0 / 512). */
  temperature?: number;
  maxTokens?: number;
}

export interface ModelProvider {
  readonly model: string;
  complete(request: CompletionRequest): Promise<Completion>;
}

/** Roughly four characters a token; deterministic so usage figures are reproducible. */
function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * Calls every tool once, in the order given, with the user's JSON input as arguments; then
 * answers with a JSON object holding the input and each tool's result.
 */
export class EchoProvider implements ModelProvider {
  readonly model = 'builtin:echo';

  async complete({
    messages,
    tools,
  }: {
    messages: ChatMessage[];
    tools: ToolSpec[];
    signal?: AbortSignal;
  }): Promise<Completion> {
    const promptText = messages.map((m) => ('content' in m && m.content ? m.content : '')).join('\n');
    const user = messages.find((m) => m.role === 'user');
    const toolResults = messages.filter(
      (m): m is Extract<ChatMessage, { role: 'tool' }> => m.role === 'tool',
    );
    let args: unknown = {};
    try {
      args = user?.content ? JSON.parse(user.content) : {};
    } catch {
      args = { text: user?.content ?? '' };
    }
    if (toolResults.length === 0 && tools.length > 0) {
      const toolCalls = tools.map((t, i) => ({ id: `call_${i + 1}`, name: t.name, arguments: args }));
      return {
        content: null,
        toolCalls,
        usage: { input: estimateTokens(promptText), output: 8 * toolCalls.length },
      };
    }
    const results: Record<string, unknown> = {};
    for (const r of toolResults) {
      try {
        results[r.name] = JSON.parse(r.content);
      } catch {
        results[r.name] = r.content;
      }
    }
    const content = JSON.stringify({ echo: args, tools: results });
    return {
      content,
      toolCalls: [],
      usage: { input: estimateTokens(promptText), output: estimateTokens(content) },
    };
  }
}

interface OpenAiChoice {
  message?: {
    content?: string | null;
    tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  };
}

export class OpenAiCompatibleProvider implements ModelProvider {
  constructor(
    readonly model: string,
    private readonly baseUrl: string,
    private readonly apiKey: string | undefined,
  ) {}

  async complete({
    messages,
    tools,
    signal,
    temperature,
    maxTokens,
  }: CompletionRequest): Promise<Completion> {
    const body: Record<string, unknown> = {
      model: this.model,
      messages: messages.map((m) => {
        if (m.role === 'tool') return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
        if (m.role === 'assistant') {
          const out: Record<string, unknown> = { role: 'assistant', content: m.content };
          if (m.toolCalls && m.toolCalls.length > 0) {
            out['tool_calls'] = m.toolCalls.map((c) => ({
              id: c.id,
              type: 'function',
              function: { name: c.name, arguments: JSON.stringify(c.arguments) },
            }));
          }
          return out;
        }
        return m;
      }),
    };
    if (tools.length > 0) {
      body['tools'] = tools.map((t) => ({ type: 'function', function: t }));
    }
    if (temperature !== undefined) body['temperature'] = temperature;
    if (maxTokens !== undefined) body['max_tokens'] = maxTokens;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.apiKey) headers['authorization'] = `Bearer ${this.apiKey}`;
    const url = this.baseUrl.replace(/\/+$/, '') + '/chat/completions';
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal });
    const text = await res.text();
    if (!res.ok) throw new Error(`model provider ${url} answered ${res.status}: ${text.slice(0, 200)}`);
    let parsed: { choices?: OpenAiChoice[]; usage?: { prompt_tokens?: number; completion_tokens?: number } };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      throw new Error(`model provider ${url} answered with invalid JSON`);
    }
    const message = parsed.choices?.[0]?.message;
    if (!message) throw new Error(`model provider ${url} answered without choices`);
    const toolCalls = (message.tool_calls ?? []).map((c) => {
      let args: unknown = {};
      try {
        args = JSON.parse(c.function.arguments || '{}');
      } catch {
        args = { raw: c.function.arguments };
      }
      return { id: c.id, name: c.function.name, arguments: args };
    });
    return {
      content: message.content ?? null,
      toolCalls,
      usage: { input: parsed.usage?.prompt_tokens ?? 0, output: parsed.usage?.completion_tokens ?? 0 },
    };
  }
}

export function createProvider(model: string, settings: ProviderSettings): ModelProvider {
  if (model === 'builtin:echo' || model === 'builtin') return new EchoProvider();
  if (model === 'openai' || model.startsWith('openai:')) {
    const name = model.startsWith('openai:') ? model.slice('openai:'.length) : settings.openaiModel;
    if (!name) throw new Error('model "openai" needs AUTOMATION_OPENAI_MODEL or a name: openai:<model>');
    if (!settings.openaiBaseUrl) throw new Error('model provider openai needs AUTOMATION_OPENAI_BASE_URL');
    return new OpenAiCompatibleProvider(name, settings.openaiBaseUrl, settings.openaiApiKey);
  }
  throw new Error(`unknown model provider ${JSON.stringify(model)} (use builtin:echo or openai:<model>)`);
}
