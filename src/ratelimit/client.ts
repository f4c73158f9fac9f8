// `sluice ratelimit-client -dial_string localhost:8081 -domain D -descriptors k=v,k2=v2 …`:
// one ShouldRateLimit call over gRPC, the response printed as proto3 JSON.

import {
  createUnaryClient,
  GrpcError,
  loadProto,
  PROTO_FILES,
  serviceDefinition,
  statusName,
} from '../core/grpc/index.js';
import { fromWire, RLS_SERVICE, type WireRequest } from './server/grpc.js';
import { encodeResponse } from './server/json-codec.js';
import type { RateLimitResponse } from './types.js';
import { CodedError } from '../core/errors.js';

export interface ClientArgs {
  dialString: string;
  domain: string;
  descriptors: { key: string; value: string }[][];
  timeoutMs: number;
}

export class UsageError extends CodedError {
  constructor(message: string) {
    super('invalid_usage', message);
  }
}

const USAGE =
  'usage: sluice ratelimit-client [-dial_string host:port] -domain <domain> -descriptors k=v[,k2=v2] [-descriptors …]';

/** Go `flag` style: -name value, -name=value, with one or two dashes. */
export function parseClientArgs(argv: readonly string[]): ClientArgs {
  const out: ClientArgs = { dialString: 'localhost:8081', domain: '', descriptors: [], timeoutMs: 10_000 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const m = /^--?([a-z_]+)(?:=(.*))?$/s.exec(arg);
    if (!m) throw new UsageError(`unexpected argument ${JSON.stringify(arg)}\n${USAGE}`);
    const name = m[1]!;
    if (name === 'h' || name === 'help') throw new UsageError(USAGE);
    let value = m[2];
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined) throw new UsageError(`flag needs an argument: -${name}\n${USAGE}`);
    }
    switch (name) {
      case 'dial_string':
        out.dialString = value;
        break;
      case 'domain':
        out.domain = value;
        break;
      case 'descriptors':
        out.descriptors.push(
          value.split(',').map((pair) => {
            const eq = pair.indexOf('=');
            if (eq <= 0)
              throw new UsageError(`descriptor entry ${JSON.stringify(pair)} is not name=value\n${USAGE}`);
            return { key: pair.slice(0, eq), value: pair.slice(eq + 1) };
          }),
        );
        break;
      case 'timeout_ms':
        if (!/^\d+$/.test(value)) throw new UsageError(`-timeout_ms must be a whole number`);
        out.timeoutMs = Number(value);
        break;
      default:
        throw new UsageError(`flag provided but not defined: -${name}\n${USAGE}`);
    }
  }
  return out;
}

export async function runRatelimitClient(
  argv: readonly string[],
  io: { out: (s: string) => void; err: (s: string) => void } = {
    out: (s) => process.stdout.write(s),
    err: (s) => process.stderr.write(s),
  },
): Promise<number> {
  let args: ClientArgs;
  try {
    args = parseClientArgs(argv);
  } catch (error) {
    io.err(`${(error as Error).message}\n`);
    return 2;
  }
  const definition = serviceDefinition(loadProto([PROTO_FILES.rls]), RLS_SERVICE);
  const client = createUnaryClient<WireRequest, Record<string, unknown>>(
    args.dialString,
    definition,
    'ShouldRateLimit',
  );
  const request: WireRequest = {
    domain: args.domain,
    descriptors: args.descriptors.map((entries) => ({ entries })),
  };
  io.out(
    `domain: ${args.domain}\ndescriptors: ${JSON.stringify(args.descriptors.map((d) => d.map((e) => `${e.key}=${e.value}`)))}\n`,
  );
  try {
    const wire = await client.call(request, { timeoutMs: args.timeoutMs });
    io.out(`response: ${encodeResponse(responseFromWire(wire))}\n`);
    return 0;
  } catch (error) {
    const message =
      error instanceof GrpcError ? `${statusName(error.status)}: ${error.message}` : (error as Error).message;
    io.err(`request error: ${message}\n`);
    return 1;
  } finally {
    client.close();
  }
}

/** The decoded response message (enums and 64-bit values as numbers) → the service's model. */
export function responseFromWire(w: Record<string, unknown>): RateLimitResponse {
  type WireStatus = {
    code?: number;
    currentLimit?: { requestsPerUnit?: number; unit?: number; name?: string };
    limitRemaining?: number;
    durationUntilReset?: { seconds?: number };
  };
  const statuses = ((w.statuses as WireStatus[] | undefined) ?? []).map((s) => ({
    code: (s.code ?? 0) as 0 | 1 | 2,
    currentLimit: s.currentLimit
      ? {
          requestsPerUnit: s.currentLimit.requestsPerUnit ?? 0,
          unit: (s.currentLimit.unit ?? 0) as 0,
          name: s.currentLimit.name ?? '',
        }
      : undefined,
    limitRemaining: s.limitRemaining ?? 0,
    durationUntilReset: s.durationUntilReset ? (s.durationUntilReset.seconds ?? 0) : undefined,
  }));
  return {
    overallCode: ((w.overallCode as number | undefined) ?? 0) as 0 | 1 | 2,
    statuses,
    responseHeadersToAdd: (
      (w.responseHeadersToAdd as { key?: string; value?: string }[] | undefined) ?? []
    ).map((h) => ({ key: h.key ?? '', value: h.value ?? '' })),
  };
}

export { fromWire };
