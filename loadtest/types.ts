// What a load-test scenario file (loadtest/scenarios/<name>.ts) default-exports.

export type CeilingName =
  'uws-hello' | 'uws-echo' | 'node-hello' | 'node-echo' | 'grpc-constant' | 'jetstream-publish';

export interface HttpLoad {
  kind: 'http';
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  /** Path and query on the target port, e.g. `/json`. */
  path: string;
  headers?: Record<string, string>;
  /** Request body; an object is sent as JSON. */
  body?: string | object;
  /** Status codes that count as success (default any 2xx). */
  okStatus?: number[];
}

export interface GrpcLoad {
  kind: 'grpc';
  /** .proto files relative to proto/ (e.g. `envoy/service/ratelimit/v3/rls.proto`). */
  protoFiles: string[];
  /** Fully qualified service name and method name. */
  service: string;
  method: string;
  /** The request message as a plain object (proto3 JSON field names in lowerCamelCase). */
  request: object;
}

export interface ServerSpec {
  /** Arguments after `node bin/sluice.js`, e.g. `['ratelimit']`. */
  args: string[];
  /** Static environment for the server; SLUICE_DATA_DIR points at a fresh temp dir unless set. */
  env?: Record<string, string>;
  /** Environment variables that receive a free port each (e.g. `['PORT','GRPC_PORT','DEBUG_PORT']`). */
  portEnv: string[];
  /** Which of portEnv the load is aimed at. */
  target: string;
  /** An HTTP path on the target port (or `readyPortEnv`) that answers 2xx once the server is ready. */
  readyPath?: string;
  readyPortEnv?: string;
  /** Called with a fresh temp dir before the start, to write configuration files; returns extra env. */
  prepare?: (tmpDir: string) => Record<string, string> | Promise<Record<string, string>>;
}

export interface Scenario {
  description: string;
  /** The ceiling measured in the same run, with the same client settings. */
  ceiling: CeilingName;
  load: HttpLoad | GrpcLoad;
  /** Absent for scenarios that measure only ceilings. */
  server?: ServerSpec;
}

/** `ceiling-only` style files may export several ceilings to measure, without a server. */
export interface CeilingOnly {
  description: string;
  ceilingsOnly: CeilingName[];
}

export type ScenarioFile = Scenario | CeilingOnly;
