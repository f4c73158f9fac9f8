// CONFIG_TYPE=GRPC_XDS_SOTW: an aggregated-discovery (state of the world) client that receives
// RateLimitConfig resources from a management server and hands them to the config manager as
// the same documents the file loader produces.
//
// Protocol: one StreamAggregatedResources stream; the first request carries the node and the
// type URL (and the last accepted version after a reconnect). Every response holds the full set
// of configurations; it is converted and compiled here first, then
//  - valid:   ACK (version_info = the response's version, response_nonce = its nonce) and the
//             documents go to the listener (counted config_load_success there);
//  - invalid: NACK (version_info = the last accepted version, same nonce, error_detail with the
//             message) and an error event goes to the listener (config_load_error; the previous
//             configuration stays).
// Retries: until the first response ever arrives, a failed stream is reopened every
// CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL (±50 %, like the upstream's linear dial retry);
// once a connection has worked, losing it reconnects with exponential backoff
// (XDS_CLIENT_BACKOFF_*), reset by the next response.

import type { Logger } from '../../core/log.js';
import {
  loadProto,
  openBidiStream,
  PROTO_FILES,
  serviceDefinition,
  DECODE_OPTIONS,
  type GrpcClientOptions,
  type ProtoType,
} from '../../core/grpc/index.js';
import type { XdsBackoffSettings, XdsSettings } from '../settings/index.js';
import { compileRuleSet, type CompileOptions } from './compile.js';
import type { ConfigEvent, ConfigProvider } from './provider.js';
import type { YamlDomainConfig } from './parse.js';
import { toDomainConfig, type XdsRateLimitConfig } from './xds-convert.js';

export const RATELIMIT_CONFIG_TYPE_URL = 'type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig';
const ADS_SERVICE = 'envoy.service.discovery.v3.AggregatedDiscoveryService';
/** google.rpc.Code INVALID_ARGUMENT, the code xDS clients put in a NACK's error_detail. */
const INVALID_ARGUMENT = 3;

interface DiscoveryResponse {
  versionInfo?: string;
  /** protobufjs's bundled Any keeps the proto field name `type_url`. */
  resources?: { typeUrl?: string; type_url?: string; value?: Uint8Array }[];
  typeUrl?: string;
  nonce?: string;
}

interface DiscoveryRequest {
  versionInfo: string;
  node: { id: string; metadata?: { fields: Record<string, { stringValue: string }> }; userAgentName: string };
  resourceNames: string[];
  typeUrl: string;
  responseNonce: string;
  errorDetail?: { code: number; message: string };
}

/** Exponential backoff (multiplier 1.5, the common client default) with optional randomisation. */
export function backoffDelay(
  attempt: number,
  b: XdsBackoffSettings,
  random: () => number = Math.random,
): number {
  const base = Math.min(b.maxIntervalMs, b.initialIntervalMs * 1.5 ** attempt);
  if (!b.jitter || b.randomFactor === 0) return base;
  const delta = b.randomFactor * base;
  return Math.min(b.maxIntervalMs, base - delta + random() * 2 * delta);
}

export function retryDelay(intervalMs: number, random: () => number = Math.random): number {
  return intervalMs * (0.5 + random());
}

export interface XdsProviderOptions {
  settings: XdsSettings;
  /** Validation before ACK uses the same compiler (and merge rule) as the live configuration. */
  compile: Omit<CompileOptions, 'nowMs'>;
  /** false: start() resolves at once (FORCE_START_WITHOUT_INITIAL_CONFIG); default waits for the first response. */
  waitForFirstConfig?: boolean;
  log?: Logger;
  random?: () => number;
}

export class XdsConfigProvider implements ConfigProvider {
  private listener: ((event: ConfigEvent) => void) | undefined;
  private closed = false;
  private acceptedVersion = '';
  private lastEvent: ConfigEvent | undefined;
  private current: { close(): void } | undefined;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private firstEvent: (() => void) | undefined;
  private ended = 0;
  private endedWaiters: (() => void)[] = [];
  private readonly configType: ProtoType;
  private readonly ads = serviceDefinition(loadProto([PROTO_FILES.ads]), ADS_SERVICE);
  private readonly log: Logger | undefined;
  private readonly random: () => number;

  constructor(private readonly options: XdsProviderOptions) {
    this.configType = loadProto([PROTO_FILES.rlsConfig]).lookupType(
      'ratelimit.config.ratelimit.v3.RateLimitConfig',
    );
    this.log = options.log;
    this.random = options.random ?? Math.random;
  }

  /** Version of the last configuration set accepted (ACKed); '' before the first. */
  get version(): string {
    return this.acceptedVersion;
  }

  /** Streams that have ended (failed to connect, broke, or were refused); tests wait on it. */
  get streamsEnded(): number {
    return this.ended;
  }

  async waitForStreamsEnded(count: number): Promise<void> {
    while (this.ended < count && !this.closed)
      await new Promise<void>((resolve) => this.endedWaiters.push(resolve));
  }

  start(listener: (event: ConfigEvent) => void): Promise<void> {
    this.listener = listener;
    const first = new Promise<void>((resolve) => (this.firstEvent = resolve));
    this.loop = this.run();
    return this.options.waitForFirstConfig === false ? Promise.resolve() : first;
  }

  /** Hands the last received configuration to the listener again. */
  reload(): void {
    if (this.lastEvent) this.emit(this.lastEvent);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.current?.close();
    this.wake?.();
    this.firstEvent?.();
    for (const w of this.endedWaiters.splice(0)) w();
    await this.loop;
  }

  private emit(event: ConfigEvent): void {
    this.lastEvent = event;
    this.listener?.(event);
    this.firstEvent?.();
    this.firstEvent = undefined;
  }

  private async run(): Promise<void> {
    let everReceived = false;
    let attempt = 0;
    while (!this.closed) {
      const received = await this.session();
      if (this.closed) break;
      if (received) {
        everReceived = true;
        attempt = 0;
      }
      const delay = everReceived
        ? backoffDelay(attempt++, this.options.settings.backoff, this.random)
        : retryDelay(this.options.settings.connectRetryIntervalMs, this.random);
      this.log?.info(
        { server: this.options.settings.serverUrl, retryInMs: Math.round(delay) },
        'management server stream closed; reconnecting',
      );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  private clientOptions(): GrpcClientOptions & { metadata?: Record<string, string> } {
    const s = this.options.settings;
    const out: GrpcClientOptions & { metadata?: Record<string, string> } = {};
    if (s.tls) out.tls = { ...s.tls };
    if (s.maxMessageBytes !== undefined) out.maxReceiveMessageBytes = s.maxMessageBytes;
    if (Object.keys(s.additionalHeaders).length > 0) out.metadata = { ...s.additionalHeaders };
    return out;
  }

  private request(nonce: string, error?: string): DiscoveryRequest {
    const s = this.options.settings;
    const node: DiscoveryRequest['node'] = { id: s.nodeId, userAgentName: 'sluice' };
    const meta = Object.entries(s.nodeMetadata);
    if (meta.length > 0)
      node.metadata = { fields: Object.fromEntries(meta.map(([k, v]) => [k, { stringValue: v }])) };
    const req: DiscoveryRequest = {
      versionInfo: this.acceptedVersion,
      node,
      resourceNames: [],
      typeUrl: RATELIMIT_CONFIG_TYPE_URL,
      responseNonce: nonce,
    };
    if (error !== undefined) req.errorDetail = { code: INVALID_ARGUMENT, message: error };
    return req;
  }

  /** One stream's life; resolves with whether any response arrived on it. */
  private async session(): Promise<boolean> {
    let received = false;
    let stream;
    try {
      stream = openBidiStream<DiscoveryRequest, DiscoveryResponse>(
        this.options.settings.serverUrl,
        this.ads,
        'StreamAggregatedResources',
        this.clientOptions(),
      );
    } catch (err) {
      this.log?.error({ err: (err as Error).message }, 'cannot open the management server stream');
      return false;
    }
    this.current = stream;
    try {
      stream.write(this.request(''));
      for await (const response of stream) {
        received = true;
        if (this.closed) break;
        if ((response.typeUrl ?? '') !== RATELIMIT_CONFIG_TYPE_URL) {
          this.log?.warn({ typeUrl: response.typeUrl }, 'ignoring a discovery response of another type');
          continue;
        }
        stream.write(this.handle(response));
      }
    } catch (err) {
      if (!this.closed)
        this.log?.warn(
          { err: (err as Error).message, server: this.options.settings.serverUrl },
          'management server stream failed',
        );
    } finally {
      stream.close();
      this.current = undefined;
      this.ended++;
      for (const w of this.endedWaiters.splice(0)) w();
    }
    return received;
  }

  /** Validates one response and returns the ACK or NACK to send. */
  private handle(response: DiscoveryResponse): DiscoveryRequest {
    const nonce = response.nonce ?? '';
    const version = response.versionInfo ?? '';
    let documents: YamlDomainConfig[];
    try {
      documents = (response.resources ?? []).map((any) => {
        const typeUrl = any.type_url ?? any.typeUrl;
        if (typeUrl !== RATELIMIT_CONFIG_TYPE_URL)
          throw new Error(`resource of unexpected type ${typeUrl ?? '(none)'}`);
        let message: XdsRateLimitConfig;
        try {
          message = this.configType.toObject(
            this.configType.decode(any.value ?? new Uint8Array()),
            DECODE_OPTIONS,
          );
        } catch (err) {
          throw new Error(`undecodable RateLimitConfig: ${(err as Error).message}`);
        }
        return toDomainConfig(message);
      });
      compileRuleSet(documents, this.options.compile);
    } catch (err) {
      const error = err as Error;
      this.log?.error(
        { err: error.message, version, nonce },
        'management server configuration rejected (NACK)',
      );
      this.emit({ ok: false, error });
      return this.request(nonce, error.message);
    }
    this.acceptedVersion = version;
    this.log?.info(
      { version, domains: documents.map((d) => d.domain) },
      'management server configuration accepted (ACK)',
    );
    this.emit({ ok: true, documents });
    return this.request(nonce);
  }
}

/** Builds the provider for CONFIG_TYPE=GRPC_XDS_SOTW. */
export function createXdsProvider(options: XdsProviderOptions): XdsConfigProvider {
  return new XdsConfigProvider(options);
}
