// Status codes and the error a handler throws to answer with a specific gRPC status, so that
// services never import @grpc/grpc-js themselves.

import { CodedError } from '../errors.js';

export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

export type GrpcStatusCode = (typeof GrpcStatus)[keyof typeof GrpcStatus];

/** `status` is the numeric gRPC status on the wire; `code` its name in snake_case (`not_found`). */
export class GrpcError extends CodedError {
  constructor(
    readonly status: GrpcStatusCode,
    message: string,
  ) {
    super(statusName(status).toLowerCase(), message);
  }
}

const NAMES = new Map<number, string>(Object.entries(GrpcStatus).map(([k, v]) => [v, k]));

export function statusName(code: number): string {
  return NAMES.get(code) ?? `STATUS_${code}`;
}
