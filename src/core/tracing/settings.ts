// The OpenTelemetry trace export settings every service reads (TRACING_*, and the OpenTelemetry
// OTEL_EXPORTER_OTLP_* variables), with the rate limit spec's names and defaults. Each service
// reads them once through its own settings module and passes its default service name (the rate
// limit service `RateLimit`, the others `sluice-streams`, `sluice-automation`).

import { SettingsError, type EnvReader } from '../settings/index.js';

export interface TracingSettings {
  readonly enabled: boolean;
  readonly protocol: 'http' | 'grpc';
  readonly serviceName: string;
  readonly serviceNamespace: string;
  readonly serviceInstanceId: string;
  readonly samplingRate: number;
  /** Exporter URL from OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT; the exporter's default when unset. */
  readonly endpoint: string | undefined;
  readonly headers: Readonly<Record<string, string>>;
}

export function loadTracingSettings(env: EnvReader, defaultServiceName: string): TracingSettings {
  const enabledText = env.string('TRACING_ENABLED', 'false').trim().toLowerCase();
  // The spec allows exactly true or false here, unlike the looser booleans elsewhere.
  if (enabledText !== 'true' && enabledText !== 'false')
    throw new SettingsError('TRACING_ENABLED', env.string('TRACING_ENABLED', ''), 'true or false');
  const instance = env.optionalString('TRACING_SERVICE_INSTANCE_ID');
  const tracesEndpoint = env.optionalString('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const baseEndpoint = env.optionalString('OTEL_EXPORTER_OTLP_ENDPOINT');
  const protocol = env.enumeration('TRACING_EXPORTER_PROTOCOL', ['http', 'grpc'] as const, 'http');
  let endpoint: string | undefined = tracesEndpoint;
  // The OTLP convention: the generic endpoint gets the signal path appended for HTTP only.
  if (endpoint === undefined && baseEndpoint !== undefined)
    endpoint = protocol === 'http' ? baseEndpoint.replace(/\/+$/, '') + '/v1/traces' : baseEndpoint;
  if (endpoint !== undefined) {
    try {
      new URL(endpoint);
    } catch {
      throw new SettingsError(
        tracesEndpoint !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT',
        endpoint,
        'a URL',
      );
    }
  }
  return Object.freeze({
    enabled: enabledText === 'true',
    protocol,
    serviceName: env.string('TRACING_SERVICE_NAME', defaultServiceName),
    serviceNamespace: env.string('TRACING_SERVICE_NAMESPACE', ''),
    serviceInstanceId: instance ?? crypto.randomUUID(),
    samplingRate: env.float('TRACING_SAMPLING_RATE', 1, { min: 0, max: 1 }),
    endpoint,
    headers: Object.freeze(parseOtelHeaders(env)),
  });
}

/** OTEL_EXPORTER_OTLP_HEADERS: `k1=v1,k2=v2` (the OpenTelemetry form, values URL-encoded). */
function parseOtelHeaders(env: EnvReader): Record<string, string> {
  const found = env.lookup(['OTEL_EXPORTER_OTLP_TRACES_HEADERS', 'OTEL_EXPORTER_OTLP_HEADERS']);
  const out: Record<string, string> = {};
  if (!found) return out;
  for (const item of found.value.split(',')) {
    if (item.trim() === '') continue;
    const eq = item.indexOf('=');
    if (eq <= 0) throw new SettingsError(found.name, found.value, 'a comma list of key=value headers');
    out[decodeURIComponent(item.slice(0, eq).trim())] = decodeURIComponent(item.slice(eq + 1).trim());
  }
  return out;
}
