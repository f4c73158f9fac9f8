// A configuration error: the message is exactly `<file name>: <upstream text>` so operators
// can grep the same strings as for the upstream service; `path` adds where in the document the
// problem is (descriptor composite key), logged beside the message.

import { CodedError } from '../../core/errors.js';

export class ConfigError extends CodedError {
  constructor(
    readonly file: string,
    readonly text: string,
    readonly path?: string,
  ) {
    super('invalid_config', `${file}: ${text}`);
  }
}
