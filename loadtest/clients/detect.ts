// Finds optional load generators on PATH (wrk and h2load come from Debian packages).

import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export function onPath(binary: string): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, binary);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
