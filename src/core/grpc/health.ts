// The standard grpc.health.v1.Health service, answered from a callback so that any health
// source (the HealthRegistry, a flag) can back it. Check answers for the server as a whole
// (service "") and for the services named in `services`; other names get NOT_FOUND, as the
// protocol asks. Watch sends the current state at once and then every change, found by
// re-evaluating the callback when `notify()` is called and on a slow timer as a safety net.

import { GrpcError, GrpcStatus } from './errors.js';
import { loadProto, PROTO_FILES } from './proto.js';
import {
  serviceDefinition,
  type CallContext,
  type GrpcServiceBinding,
  type ServerStream,
} from './service.js';

export type ServingState = 'SERVING' | 'NOT_SERVING';

const STATUS = { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } as const;

interface HealthCheckRequest {
  service?: string;
}
interface HealthCheckResponse {
  status: number;
}

export interface HealthServiceOptions {
  /** Service names (besides "") that the checks answer for. */
  services?: readonly string[];
  /** Safety-net re-evaluation period for Watch streams; default 1 s. */
  pollMs?: number;
  /**
   * Subscribes to changes of the health source (e.g. `(l) => registry.onChange(l)`); returns the
   * unsubscribe function. Watch streams then see a change at once instead of at the next poll.
   */
  onChange?: (listener: () => void) => () => void;
}

export interface HealthService {
  binding: GrpcServiceBinding;
  /** Re-evaluates the callback and pushes changes to Watch streams. */
  notify(): void;
}

export function healthService(state: () => ServingState, options: HealthServiceOptions = {}): HealthService {
  const known = new Set(['', ...(options.services ?? [])]);
  const watchers = new Set<() => void>();
  const current = (): number => (state() === 'SERVING' ? STATUS.SERVING : STATUS.NOT_SERVING);
  const pollMs = options.pollMs ?? 1_000;
  const notify = (): void => {
    for (const push of [...watchers]) push();
  };
  // Subscribed only while someone watches, so an idle server keeps no listener on the source.
  let unsubscribe: (() => void) | undefined;
  const watched = (): void => {
    if (!unsubscribe && options.onChange) unsubscribe = options.onChange(notify);
  };
  const unwatched = (): void => {
    if (watchers.size === 0 && unsubscribe) {
      unsubscribe();
      unsubscribe = undefined;
    }
  };

  const check = (request: HealthCheckRequest): HealthCheckResponse => {
    const name = request.service ?? '';
    if (!known.has(name))
      throw new GrpcError(GrpcStatus.NOT_FOUND, `unknown service ${JSON.stringify(name)}`);
    return { status: current() };
  };

  const watch = (
    request: HealthCheckRequest,
    stream: ServerStream<HealthCheckResponse>,
    call: CallContext,
  ): Promise<void> =>
    new Promise<void>((resolve) => {
      const name = request.service ?? '';
      let last = -1;
      const push = (): void => {
        if (stream.cancelled) return stop();
        const status = known.has(name) ? current() : STATUS.SERVICE_UNKNOWN;
        if (status === last) return;
        last = status;
        stream.write({ status });
      };
      const timer = setInterval(push, pollMs);
      timer.unref();
      function stop(): void {
        clearInterval(timer);
        watchers.delete(push);
        unwatched();
        resolve();
      }
      watchers.add(push);
      watched();
      call.signal.addEventListener('abort', stop, { once: true });
      push();
    });

  const definition = serviceDefinition(loadProto([PROTO_FILES.health]), 'grpc.health.v1.Health');
  return {
    binding: { definition, implementation: { Check: check, Watch: watch } },
    notify,
  };
}
