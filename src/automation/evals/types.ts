// Shapes shared by the evaluator config parser, the scorers and scoreRun. Everything here is
// plain data so a parsed config can be stored (LMDB/msgpackr) and handed between threads.

export const EVALUATOR_TYPES = [
  'exact-diff',
  'equals',
  'contains',
  'regex',
  'is-json',
  'json-schema',
  'similar',
  'file-equals',
  'custom-script',
  'llm-judge',
] as const;

export type EvaluatorType = (typeof EVALUATOR_TYPES)[number];

/** Why a custom-script evaluator is refused at validation and not run when scoring. */
export const CUSTOM_SCRIPTS_DISABLED =
  'custom scripts are disabled on this server (AUTOMATION_CUSTOM_SCRIPTS=false)';

/** `{ $expected: "/pointer" }` in YAML: the operand is read from the example's expected output. */
export interface ExpectedRef {
  readonly $expected: string;
}

/** An operand: a literal JSON value or a reference into the expected output. */
export type Operand = { readonly literal: unknown } | { readonly expectedPointer: string };

interface Base<T extends EvaluatorType> {
  readonly name: string;
  readonly type: T;
  readonly weight: number;
  /** Score at or above which this evaluator passes. */
  readonly threshold: number;
  readonly description?: string;
}

export interface ExactDiffSpec extends Base<'exact-diff'> {
  /** Dot paths (`lines[].sku`) or JSON Pointers; empty = the whole output. */
  readonly paths: readonly string[];
  readonly numericTolerance: number;
  readonly allowExtraFields: boolean;
}

export interface EqualsSpec extends Base<'equals'> {
  readonly path: string;
  /** Absent: the expected output at the same path. */
  readonly value: Operand;
}

export interface ContainsSpec extends Base<'contains'> {
  readonly path: string;
  readonly values: readonly string[];
  readonly mode: 'all' | 'any';
  readonly ignoreCase: boolean;
}

export interface RegexSpec extends Base<'regex'> {
  readonly path: string;
  readonly pattern: string;
  readonly flags: string;
}

export interface IsJsonSpec extends Base<'is-json'> {
  readonly path: string;
}

export interface JsonSchemaSpec extends Base<'json-schema'> {
  readonly path: string;
  readonly schema: boolean | Record<string, unknown>;
}

export interface SimilarSpec extends Base<'similar'> {
  readonly path: string;
  readonly value: Operand;
  readonly ignoreCase: boolean;
  readonly normalizeWhitespace: boolean;
}

export interface FileEqualsSpec extends Base<'file-equals'> {
  readonly outputFile: string;
  readonly expectedFile: string;
}

export interface CustomScriptSpec extends Base<'custom-script'> {
  readonly script: string;
  readonly timeoutMs: number;
  readonly memoryLimitMb: number;
}

export interface LlmJudgeSpec extends Base<'llm-judge'> {
  readonly path: string;
  readonly model: string | null;
  readonly mode: 'continuous' | 'discrete';
  /** Label → score; required in discrete mode, optional hints in continuous mode. */
  readonly labels: Readonly<Record<string, number>>;
  readonly promptExtension: string;
  readonly includeInput: boolean;
  readonly timeoutMs: number;
}

export type EvaluatorSpec =
  | ExactDiffSpec
  | EqualsSpec
  | ContainsSpec
  | RegexSpec
  | IsJsonSpec
  | JsonSchemaSpec
  | SimilarSpec
  | FileEqualsSpec
  | CustomScriptSpec
  | LlmJudgeSpec;

export interface EvaluatorConfig {
  /** A run passes when its weighted score is at least this. */
  readonly passThreshold: number;
  readonly evaluators: readonly EvaluatorSpec[];
}

export interface ConfigIssue {
  /** Field path such as `evaluators[2].value`, or `<root>` for the document itself. */
  readonly path: string;
  readonly message: string;
  /** 1-based line in the YAML text, when the field can be located. */
  readonly line?: number;
}

export type ParseResult =
  | { readonly ok: true; readonly config: EvaluatorConfig }
  | { readonly ok: false; readonly errors: readonly ConfigIssue[] };

/** Access to the run's output files and the example's expected files (byte-exact). */
export interface EvalFiles {
  /** undefined when the run produced no such file. */
  readOutput(name: string): Promise<Uint8Array | undefined>;
  /** undefined when the example has no such expected file. */
  readExpected(name: string): Promise<Uint8Array | undefined>;
}

export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

export interface CompletionOptions {
  readonly model?: string;
  readonly maxTokens?: number;
  readonly temperature?: number;
  readonly signal?: AbortSignal;
}

export interface CompletionUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

export interface ModelProvider {
  complete(
    messages: readonly ChatMessage[],
    opts: CompletionOptions,
  ): Promise<{ text: string; usage: CompletionUsage; /** The model that answered. */ model?: string }>;
}

export interface EvaluatorResult {
  readonly name: string;
  readonly type: EvaluatorType;
  /** In [0,1]; 0 when the evaluator errored. */
  readonly score: number;
  readonly passed: boolean;
  readonly weight: number;
  readonly threshold: number;
  readonly label: string | null;
  readonly details: Record<string, unknown>;
  /** Set when the evaluator could not score (bad input, script crash, provider failure). */
  readonly error: string | null;
}

export interface RunScore {
  /** Weighted mean over evaluators with weight > 0; null when none count. */
  readonly score: number | null;
  readonly passed: boolean | null;
  readonly passThreshold: number;
  readonly results: readonly EvaluatorResult[];
}

/** What a scorer returns before scoreRun adds name, weight and the pass decision. */
export interface ScorerOutcome {
  readonly score: number;
  /** Overrides `score >= threshold` when a scorer decides pass/fail itself (custom scripts). */
  readonly passed?: boolean;
  readonly label?: string;
  readonly details: Record<string, unknown>;
}
