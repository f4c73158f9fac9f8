// The `sluice backup <dir>` and `sluice restore <dir> [--force]` commands: argument parsing and
// messages; the work is in backup.ts and restore.ts.

import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { EnvReader } from '../core/settings/index.js';
import { runBackup } from './backup.js';
import { dataLayout } from './layout.js';
import { BackupError } from './manifest.js';
import { runRestore } from './restore.js';

const say = (line: string) => process.stdout.write(line + '\n');

async function reported(command: string, work: () => Promise<number>): Promise<number> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof BackupError) process.stderr.write(`sluice ${command}: ${err.message}\n`);
    else {
      // An I/O, LMDB or git failure: say what failed; the partial backup is already removed.
      const code = (err as { code?: string | number }).code;
      process.stderr.write(
        `sluice ${command}: failed: ${(err as Error).message}${code === undefined ? '' : ` (code ${code})`}\n`,
      );
      if (process.env.LOG_LEVEL === 'debug') process.stderr.write(`${(err as Error).stack}\n`);
    }
    return 1;
  }
}

export async function backupCommand(args: string[]): Promise<number> {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
  if (positionals.length !== 1) {
    process.stderr.write('usage: sluice backup <dir>   (a new or empty folder)\n');
    return 2;
  }
  const target = resolve(positionals[0]!);
  return reported('backup', async () => {
    const layout = dataLayout(new EnvReader());
    say(`backing up ${layout.dataDir} into ${target}`);
    const manifest = await runBackup(layout, target, (line) => say(`  ${line}`));
    if (manifest.absent.length > 0)
      say(`  not in this data directory (skipped): ${manifest.absent.join(', ')}`);
    say(`backup complete: ${target}`);
    return 0;
  });
}

export async function restoreCommand(args: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: { force: { type: 'boolean', default: false } },
  });
  if (positionals.length !== 1) {
    process.stderr.write('usage: sluice restore <dir> [--force]   (stop the server first)\n');
    return 2;
  }
  const source = resolve(positionals[0]!);
  return reported('restore', async () => {
    const layout = dataLayout(new EnvReader());
    say(`restoring ${source} into ${layout.dataDir}`);
    const manifest = await runRestore(layout, source, { force: values.force }, (line) => say(`  ${line}`));
    say(`restore complete: the backup of ${manifest.startedAt} is in ${layout.dataDir}`);
    return 0;
  });
}
