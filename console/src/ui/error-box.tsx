// One way to show a failure: the server's code and message as text, and for a service that did
// not answer, which service and where, so "down" never looks like "empty".

import type { ComponentChildren } from 'preact';
import { ApiFailure } from '../api.js';

export interface ErrorBoxProps {
  error: unknown;
  /** What was being done, e.g. "Loading topics". */
  context?: string;
  /** The service the call went to, named when it did not answer. */
  service?: string;
}

export function describeError(error: unknown, service?: string): { title: string; detail: string } {
  if (error instanceof ApiFailure) {
    if (error.code === 'unreachable')
      return {
        title: `${service ? `The ${service} service` : 'The service'} did not answer`,
        detail: 'It may be down or not reachable from this page. Views retry on their own.',
      };
    if (error.status === 401) return { title: 'Not signed in', detail: error.message };
    if (error.status === 403) return { title: 'Not allowed', detail: error.message };
    return { title: `Error ${error.status} (${error.code})`, detail: error.message };
  }
  if (error instanceof Error) return { title: 'Error', detail: error.message };
  return { title: 'Error', detail: String(error) };
}

export function ErrorBox({ error, context, service }: ErrorBoxProps) {
  const { title, detail } = describeError(error, service);
  return (
    <div class="error-box" role="alert">
      <strong>{context ? `${context}: ${title}` : title}</strong>
      <p>{detail}</p>
    </div>
  );
}

/** A neutral message box (nothing here yet, service not served …). */
export function Notice({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="notice" role="status">
      <strong>{title}</strong>
      {children ? <div>{children}</div> : null}
    </div>
  );
}
