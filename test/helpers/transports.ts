// The HTTP core's contract suite runs once per transport: `describeEachTransport` repeats a
// describe block for uWS and node:http. A transport is skipped, with the reason in the report,
// when SLUICE_HTTP_TRANSPORT forces the other one (the whole suite run on one transport) or
// when no uWS build loads on this runtime.

import { describe } from 'node:test';
import { resolveTransport } from '../../src/core/http/index.js';
import { loadHttpTransportSetting } from '../../src/core/settings/index.js';

export type Transport = 'uws' | 'node';
export const ALL_TRANSPORTS: readonly Transport[] = ['uws', 'node'];

/** Why `transport` is not tested in this run, or undefined when it is. */
export function transportSkipReason(transport: Transport): string | undefined {
  const forced = loadHttpTransportSetting();
  if (forced !== 'auto' && forced !== transport) return `SLUICE_HTTP_TRANSPORT=${forced}`;
  if (transport === 'uws') {
    try {
      resolveTransport('uws');
    } catch (error) {
      return (error as Error).message;
    }
  }
  return undefined;
}

/** The transports this run tests. */
export const TRANSPORTS: readonly Transport[] = ALL_TRANSPORTS.filter((t) => !transportSkipReason(t));

/** `describe(title [transport], …)` for each transport, skipped with its reason where it cannot run. */
export function describeEachTransport(title: string, body: (transport: Transport) => void): void {
  for (const transport of ALL_TRANSPORTS) {
    const skip = transportSkipReason(transport);
    describe(`${title} [${transport}]`, skip ? { skip } : {}, () => body(transport));
  }
}
