// The decision model shared by the engine, the servers and the client. It mirrors the v3
// protocol messages (envoy.service.ratelimit.v3) in plain objects so no transport leaks inward.

import { CodedError } from '../core/errors.js';

/** RateLimitResponse.RateLimit.Unit numbers (WEEK is 7 on the wire, after YEAR). */
export const Unit = {
  UNKNOWN: 0,
  SECOND: 1,
  MINUTE: 2,
  HOUR: 3,
  DAY: 4,
  MONTH: 5,
  YEAR: 6,
  WEEK: 7,
} as const;
export type Unit = (typeof Unit)[keyof typeof Unit];
export type UnitName = keyof typeof Unit;

export const UNIT_NAMES: Readonly<Record<number, UnitName>> = Object.freeze(
  Object.fromEntries(Object.entries(Unit).map(([name, n]) => [n, name as UnitName])),
);

/** Window length in seconds; week/month/year are flat lengths like the upstream service. */
export const UNIT_SECONDS: Readonly<Record<number, number>> = Object.freeze({
  [Unit.SECOND]: 1,
  [Unit.MINUTE]: 60,
  [Unit.HOUR]: 3600,
  [Unit.DAY]: 86_400,
  [Unit.WEEK]: 604_800,
  [Unit.MONTH]: 2_592_000,
  [Unit.YEAR]: 31_536_000,
});

export const Code = { UNKNOWN: 0, OK: 1, OVER_LIMIT: 2 } as const;
export type Code = (typeof Code)[keyof typeof Code];
export const CODE_NAMES = ['UNKNOWN', 'OK', 'OVER_LIMIT'] as const;

export const MAX_UINT32 = 4_294_967_295;

export interface DescriptorEntry {
  key: string;
  value: string;
}

export interface LimitOverride {
  requestsPerUnit: number;
  unit: number;
}

export interface RequestDescriptor {
  entries: DescriptorEntry[];
  limit?: LimitOverride | undefined;
  /** Present (even when 0) only when the caller set the UInt64Value wrapper. */
  hitsAddend?: number | undefined;
}

export interface RateLimitRequest {
  domain: string;
  descriptors: RequestDescriptor[];
  hitsAddend?: number | undefined;
}

export interface CurrentLimit {
  requestsPerUnit: number;
  unit: Unit;
  name: string;
}

export interface DescriptorStatus {
  code: Code;
  currentLimit?: CurrentLimit | undefined;
  limitRemaining: number;
  /** Whole seconds; absent when no limit applied. */
  durationUntilReset?: number | undefined;
}

export interface HeaderValue {
  key: string;
  value: string;
}

export interface RateLimitResponse {
  overallCode: Code;
  statuses: DescriptorStatus[];
  responseHeadersToAdd: HeaderValue[];
}

/** A refusal of the call itself (gRPC UNKNOWN, HTTP 400), with the upstream message text. */
export class RateLimitRequestError extends CodedError {
  constructor(
    message: string,
    /** Stat suffix under ratelimit.service.call.should_rate_limit; also the error's code. */
    readonly kind: 'service_error' | 'store_error' = 'service_error',
  ) {
    super(kind, message);
  }
}
