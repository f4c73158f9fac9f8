// A management server for tests: serves the aggregated discovery service with grpc-js (through
// the gRPC core), records every request with its headers, and pushes state-of-the-world
// snapshots of RateLimitConfig resources to every open stream. Any is written with its proto
// field name type_url: protobufjs's bundled google.protobuf.Any is not camel-cased.

import {
  loadProto,
  PROTO_FILES,
  serviceDefinition,
  startGrpcServer,
  type BidiStream,
  type CallContext,
  type GrpcServerTlsOptions,
  type RunningGrpcServer,
} from '../../../src/core/grpc/index.js';
import { RATELIMIT_CONFIG_TYPE_URL } from '../../../src/ratelimit/config/xds.js';

export interface SeenRequest {
  versionInfo?: string;
  responseNonce?: string;
  typeUrl?: string;
  node?: {
    id?: string;
    userAgentName?: string;
    metadata?: { fields?: Record<string, { stringValue?: string }> };
  };
  errorDetail?: { code?: number; message?: string };
  /** The x-tenant request header of the stream (additional-headers test). */
  tenant: string | undefined;
}

const ads = serviceDefinition(
  loadProto([PROTO_FILES.ads]),
  'envoy.service.discovery.v3.AggregatedDiscoveryService',
);
const configType = loadProto([PROTO_FILES.rlsConfig]).lookupType(
  'ratelimit.config.ratelimit.v3.RateLimitConfig',
);

export function encodeConfig(config: Record<string, unknown>): { type_url: string; value: Buffer } {
  return {
    type_url: RATELIMIT_CONFIG_TYPE_URL,
    value: Buffer.from(configType.encode(configType.fromObject(config)).finish()),
  };
}

export class ManagementServer {
  readonly requests: SeenRequest[] = [];
  private readonly streams = new Set<BidiStream<unknown, unknown>>();
  private snapshot: { version: string; resources: { type_url: string; value: Buffer }[] } | undefined;
  private nonce = 0;
  private waiters: (() => void)[] = [];
  private server: RunningGrpcServer | undefined;

  get port(): number {
    return this.server?.port ?? 0;
  }

  async start(port = 0, tls?: GrpcServerTlsOptions): Promise<void> {
    this.server = await startGrpcServer({
      host: '127.0.0.1',
      port,
      ...(tls ? { tls } : {}),
      services: [
        {
          definition: ads,
          implementation: {
            StreamAggregatedResources: (stream: BidiStream<unknown, unknown>, call: CallContext) =>
              this.serve(stream, call.header('x-tenant')),
          },
        },
      ],
    });
  }

  async stop(): Promise<void> {
    for (const s of this.streams) s.end();
    await this.server?.close(200);
    this.server = undefined;
  }

  /** Sets the snapshot and sends it to every open stream; returns the nonce used last. */
  push(version: string, resources: { type_url: string; value: Buffer }[]): void {
    this.snapshot = { version, resources };
    for (const s of this.streams) this.send(s);
  }

  /** The nonce the next response will carry. */
  get nextNonce(): string {
    return String(this.nonce + 1);
  }

  async waitForRequest(test: (r: SeenRequest) => boolean, from = 0): Promise<SeenRequest> {
    for (;;) {
      const found = this.requests.slice(from).find(test);
      if (found) return found;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  private send(stream: BidiStream<unknown, unknown>): void {
    if (!this.snapshot) return;
    stream.write({
      versionInfo: this.snapshot.version,
      resources: this.snapshot.resources,
      typeUrl: RATELIMIT_CONFIG_TYPE_URL,
      nonce: String(++this.nonce),
    });
  }

  private async serve(stream: BidiStream<unknown, unknown>, tenant: string | undefined): Promise<void> {
    this.streams.add(stream);
    try {
      for await (const message of stream) {
        const req = message as SeenRequest;
        this.requests.push({ ...req, tenant });
        for (const w of this.waiters.splice(0)) w();
        // A request without a nonce opens the subscription: answer with the current state.
        if (!req.responseNonce) this.send(stream);
      }
    } finally {
      this.streams.delete(stream);
      stream.end();
    }
  }
}
