// Dispatch from an evaluator spec to its scorer.
import type { ScriptPool } from '../sandbox.js';
import type { ScoreInput } from '../subject.js';
import type { EvalFiles, EvaluatorSpec, ModelProvider, ScorerOutcome } from '../types.js';
import { scoreContains } from './contains.js';
import { scoreCustomScript } from './custom-script.js';
import { scoreEquals } from './equals.js';
import { scoreExactDiff } from './exact-diff.js';
import { scoreFileEquals } from './file-equals.js';
import { scoreIsJson } from './is-json.js';
import { scoreJsonSchema } from './json-schema.js';
import { scoreLlmJudge } from './llm-judge.js';
import { scoreRegex } from './regex.js';
import { scoreSimilar } from './similar.js';

export interface ScorerEnv {
  readonly files?: EvalFiles;
  readonly provider?: ModelProvider;
  readonly pool?: ScriptPool;
  readonly signal?: AbortSignal;
}

export function runScorer(
  spec: EvaluatorSpec,
  data: ScoreInput,
  env: ScorerEnv,
): ScorerOutcome | Promise<ScorerOutcome> {
  switch (spec.type) {
    case 'exact-diff':
      return scoreExactDiff(spec, data);
    case 'equals':
      return scoreEquals(spec, data);
    case 'contains':
      return scoreContains(spec, data);
    case 'regex':
      return scoreRegex(spec, data, env.pool, env.signal);
    case 'is-json':
      return scoreIsJson(spec, data);
    case 'json-schema':
      return scoreJsonSchema(spec, data, env.pool, env.signal);
    case 'similar':
      return scoreSimilar(spec, data);
    case 'file-equals':
      return scoreFileEquals(spec, env.files);
    case 'custom-script':
      return scoreCustomScript(spec, data, env.pool, env.signal);
    case 'llm-judge':
      return scoreLlmJudge(spec, data, env.provider, env.signal);
  }
}
