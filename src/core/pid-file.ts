// `<data>/sluice.pid`: the process id of the server using the data directory, written at start
// and removed at exit, so that `sluice restore` can refuse to replace data under a running
// server. A file naming a process that no longer exists (a server killed with SIGKILL) is stale
// and ignored.

import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const PID_FILE = 'sluice.pid';

/** The live process named by the data directory's pid file (never this one), or undefined. */
export function runningServerPid(dataDir: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(join(dataDir, PID_FILE), 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number(text.trim());
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (err) {
    // EPERM: it exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? pid : undefined;
  }
}

/**
 * Writes this process's id into the data directory (which must exist) and removes it at exit.
 * A file naming another live process is left as it is: that server keeps the data directory.
 */
export function claimPidFile(dataDir: string): void {
  if (runningServerPid(dataDir) !== undefined) return;
  const path = join(dataDir, PID_FILE);
  writeFileSync(path, `${process.pid}\n`);
  process.once('exit', () => {
    try {
      if (readFileSync(path, 'utf8').trim() === String(process.pid)) rmSync(path, { force: true });
    } catch {
      // Already gone.
    }
  });
}
