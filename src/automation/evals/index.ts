// Public surface of the evaluators library (issue 7): parse a config, score a run.
export { parseEvaluatorConfig, DEFAULT_PASS_THRESHOLD, MAX_CONFIG_BYTES, MAX_EVALUATORS } from './config.js';
export { scoreRun, weightedScore, meetsThreshold, type ScoreRunArgs } from './score.js';
export { ScriptPool, type ScriptPoolOptions } from './sandbox.js';
export { scriptPoolOptionsFromEnv } from './settings.js';
export { DeterministicJudgeProvider } from './providers/deterministic-judge.js';
export { adaptToolChatProvider, type ToolChatProvider } from './providers/chat-adapter.js';
export { EVALUATOR_TYPES } from './types.js';
export type {
  ChatMessage,
  CompletionOptions,
  CompletionUsage,
  ConfigIssue,
  EvalFiles,
  EvaluatorConfig,
  EvaluatorResult,
  EvaluatorSpec,
  EvaluatorType,
  ModelProvider,
  ParseResult,
  RunScore,
} from './types.js';
