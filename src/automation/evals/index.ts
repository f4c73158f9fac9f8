// Public surface of the evaluators library: parse a config, score a run.
export {
  parseEvaluatorConfig,
  DEFAULT_PASS_THRESHOLD,
  MAX_CONFIG_BYTES,
  MAX_EVALUATORS,
  type ParseOptions,
} from './config.js';
export { scoreRun, weightedScore, meetsThreshold, type ScoreRunArgs } from './score.js';
export { ScriptPool, type ScriptPoolOptions } from './sandbox.js';
export {
  checkSchema,
  usesPatterns,
  type JsonSchema,
  type SchemaIssue,
  type SchemaOutcome,
} from './schema-check.js';
export { DeterministicJudgeProvider } from './providers/deterministic-judge.js';
export { adaptToolChatProvider, type ToolChatProvider } from './providers/chat-adapter.js';
export { EVALUATOR_TYPES, CUSTOM_SCRIPTS_DISABLED } from './types.js';
export { EvaluatorError } from './subject.js';
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
