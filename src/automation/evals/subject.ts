// What an evaluator looks at: the output value at its path, its operand (a literal or a
// `$expected` reference) and, for the text evaluators, the text form of a value.
import { resolvePointer } from './json-pointer.js';
import type { Operand } from './types.js';
import { CodedError } from '../../core/errors.js';

export interface ScoreInput {
  readonly output: unknown;
  readonly expected: unknown;
  readonly input: unknown;
}

/** Thrown when an evaluator cannot score at all; scoreRun turns it into an error result. */
export class EvaluatorError extends CodedError {
  constructor(
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super('evaluator_failed', message);
  }
}

export function resolveOperand(operand: Operand, data: ScoreInput): unknown {
  if ('literal' in operand) return operand.literal;
  const value = resolvePointer(data.expected, operand.expectedPointer);
  if (value === undefined) {
    throw new EvaluatorError(`the expected output has no value at "${operand.expectedPointer}"`);
  }
  return value;
}

/** Strings as they are; any other JSON value as compact JSON; undefined stays undefined. */
export function asText(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}
