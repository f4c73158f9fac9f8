// A configuration error: the message is exactly `<file name>: <upstream text>` so operators
// can grep the same strings as for the upstream service; `path` adds where in the document the
// problem is (descriptor composite key), logged beside the message.

export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly text: string,
    readonly path?: string,
  ) {
    super(`${file}: ${text}`);
    this.name = 'ConfigError';
  }
}
