// Sends grpc-js's own diagnostics (bind failures, credential reload errors) through the project
// logger instead of bare console.error lines, so LOG_LEVEL and LOG_FORMAT apply to them too.
// grpc-js's verbosity (GRPC_VERBOSITY) still decides what it emits.

import { format } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { createLogger, type Logger } from '../log.js';

let installed = false;

export function routeLibraryLogs(): void {
  if (installed) return;
  installed = true;
  let log: Logger | undefined;
  const logger = (): Logger => (log ??= createLogger('grpc-js'));
  grpc.setLogger({
    error: (message?: unknown, ...rest: unknown[]) => logger().warn(format(message, ...rest)),
    info: (message?: unknown, ...rest: unknown[]) => logger().info(format(message, ...rest)),
    debug: (message?: unknown, ...rest: unknown[]) => logger().debug(format(message, ...rest)),
  });
}
