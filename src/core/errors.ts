// The one base for Sluice's own errors: every error a module throws on purpose carries a stable,
// machine-readable `code` (snake_case), so callers branch on the code, never on message text, and
// the HTTP and gRPC layers can map it without knowing the module that threw it.

export class CodedError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** True for any Sluice error with a code, also across module copies (duck-typed on purpose). */
export function isCodedError(err: unknown): err is CodedError {
  return (
    err instanceof CodedError ||
    (err instanceof Error && typeof (err as { code?: unknown }).code === 'string')
  );
}
