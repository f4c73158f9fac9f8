// The contract between the core and a service. A service starts inside one thread from a
// ServiceContext and returns something that can be closed; the core decides on which threads.

import type { Logger } from './log.js';
import type { Authenticator } from './auth/types.js';
import type { HealthRegistry } from './health.js';
import type { CoreSettings, EnvReader } from './settings/index.js';
import type { ServiceDirectory } from './directory.js';
import type { PlannedListener } from './port-probe.js';

export interface ServiceContext {
  readonly core: CoreSettings;
  readonly env: EnvReader;
  readonly log: Logger;
  readonly health: HealthRegistry;
  readonly auth: Authenticator;
  /** Which front-end thread this is (0-based) and how many there are. */
  readonly thread: { readonly index: number; readonly count: number };
  /** Shared memory made once by the main thread (prepare<Service>Shared) and given to every thread. */
  readonly shared: Readonly<Record<string, SharedArrayBuffer>>;
  /** The services of this process and their ports (absent: the service runs alone, as in tests). */
  readonly directory?: ServiceDirectory;
}

export interface RunningService {
  readonly name: string;
  /** What to print: listener name → URL or address. */
  readonly addresses: Readonly<Record<string, string>>;
  /**
   * What the service keeps its data in, as the start banner prints it: store name → where
   * (a path, host:port/database, server list). Never a password or token.
   */
  readonly backends: Readonly<Record<string, string>>;
  /** Stops accepting, drains in-flight work, closes stores. */
  close(): Promise<void>;
  /** Called first on a stop signal (before close), e.g. to turn health red. */
  beginShutdown?(): void;
}

export type ServiceName = 'ratelimit' | 'streams' | 'automation';
export const SERVICE_NAMES: readonly ServiceName[] = ['ratelimit', 'streams', 'automation'];

/** What a service's code provides, loaded only where the service runs. */
export interface ServiceModule {
  start(ctx: ServiceContext): Promise<RunningService>;
  prepareShared?(env: EnvReader): Record<string, SharedArrayBuffer>;
}

/** What the core knows about a service without loading its code. */
export interface ServiceDescriptor {
  /** true: runs on every front-end thread (stateless over shared memory); false: thread 0 only. */
  readonly allThreads: boolean;
  /** true: the main thread calls prepareShared once (so it loads the module). */
  readonly sharedMemory: boolean;
  /** How to authenticate, printed at start. */
  readonly authHint: string;
  load(): Promise<ServiceModule>;
  /** The TCP ports the service will listen on with `threads` threads, checked free before start. */
  listeners(env: EnvReader, core: CoreSettings, threads: number): Promise<PlannedListener[]>;
}
