// An agent is a loop: ask the model, run the tools it calls, feed the results back, until the
// model answers without tool calls or the turn limit is reached.

import type { RunTask } from '../protocol.js';
import type { Reporter, RunContext } from './context.js';
import { createProvider, type ChatMessage, type ToolSpec } from './providers.js';

export interface AgentTool {
  description?: string;
  parameters?: Record<string, unknown>;
  run(args: unknown, ctx: RunContext): unknown;
}

export function toolsFromModule(mod: Record<string, unknown> | undefined): Record<string, AgentTool> {
  if (!mod) return {};
  const raw = (mod['tools'] ??
    (mod['default'] as Record<string, unknown> | undefined)?.['tools'] ??
    mod['default']) as Record<string, AgentTool> | undefined;
  if (!raw || typeof raw !== 'object') return {};
  const out: Record<string, AgentTool> = {};
  for (const [name, tool] of Object.entries(raw)) {
    if (tool && typeof tool.run === 'function') out[name] = tool;
  }
  return out;
}

export async function runAgent(
  task: RunTask,
  ctx: RunContext,
  reporter: Reporter,
  tools: Record<string, AgentTool>,
): Promise<unknown> {
  const manifest = task.manifest;
  const model = typeof manifest['model'] === 'string' ? manifest['model'] : 'builtin:echo';
  const maxTurns = typeof manifest['maxTurns'] === 'number' ? manifest['maxTurns'] : 8;
  const wanted = Array.isArray(manifest['tools'])
    ? (manifest['tools'] as unknown[]).map(String)
    : Object.keys(tools);
  const specs: ToolSpec[] = wanted.map((name) => {
    const tool = tools[name];
    if (!tool)
      throw new Error(
        `agent manifest names tool ${JSON.stringify(name)} but the entry module does not export it`,
      );
    return {
      name,
      description: tool.description ?? name,
      parameters: tool.parameters ?? { type: 'object' },
    };
  });
  const provider = createProvider(model, task.providers);
  const messages: ChatMessage[] = [];
  if (typeof manifest['systemPrompt'] === 'string')
    messages.push({ role: 'system', content: manifest['systemPrompt'] });
  messages.push({
    role: 'user',
    content: typeof task.input === 'string' ? task.input : JSON.stringify(task.input ?? {}),
  });

  for (let turn = 1; turn <= maxTurns; turn++) {
    ctx.throwIfCancelled();
    const startedAt = new Date().toISOString();
    const completion = await provider.complete({ messages, tools: specs, signal: ctx.signal });
    ctx.usage.add({ tokens: completion.usage, llmCalls: 1, agentTurns: 1 });
    reporter.event('agent.turn', undefined, { turn, toolCalls: completion.toolCalls.length });
    reporter.trace({
      type: 'model.response',
      turn,
      model: provider.model,
      startedAt,
      completedAt: new Date().toISOString(),
      content: completion.content,
      toolCalls: completion.toolCalls.map((c) => c.name),
      usage: completion.usage,
    });
    messages.push({ role: 'assistant', content: completion.content, toolCalls: completion.toolCalls });
    if (completion.toolCalls.length === 0) return parseAnswer(completion.content);
    for (const call of completion.toolCalls) {
      ctx.throwIfCancelled();
      const tool = tools[call.name];
      const callStarted = new Date().toISOString();
      reporter.event('tool.called', undefined, { turn, tool: call.name, callId: call.id });
      let result: unknown;
      let error: string | undefined;
      if (!tool || !wanted.includes(call.name)) {
        error = `unknown tool ${call.name}`;
      } else {
        try {
          result = await tool.run(call.arguments, ctx);
        } catch (err) {
          if (ctx.signal.aborted) throw err;
          error = err instanceof Error ? err.message : String(err);
        }
      }
      const entry: Record<string, unknown> = {
        type: 'tool.result',
        turn,
        tool: call.name,
        callId: call.id,
        arguments: call.arguments,
        startedAt: callStarted,
        completedAt: new Date().toISOString(),
        status: error === undefined ? 'completed' : 'failed',
      };
      if (error === undefined) entry['result'] = result;
      else entry['error'] = error;
      reporter.trace(entry);
      messages.push({
        role: 'tool',
        toolCallId: call.id,
        name: call.name,
        content: error === undefined ? JSON.stringify(result ?? null) : JSON.stringify({ error }),
      });
    }
  }
  throw new Error(`agent did not answer within ${maxTurns} turns`);
}

function parseAnswer(content: string | null): unknown {
  if (content === null) return null;
  try {
    const value: unknown = JSON.parse(content);
    if (value !== null && typeof value === 'object') return value;
  } catch {
    // plain text answer
  }
  return { text: content };
}
