// Runs an external load generator (wrk, h2load) to completion and returns what it printed.
// Every run is bounded: the tool is killed if it outlives its own duration by 20 s.

import { spawn } from 'node:child_process';

export function runTool(
  binary: string,
  args: string[],
  durationS: number,
): Promise<{ out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const killer = setTimeout(
      () => child.pid !== undefined && process.kill(child.pid, 'SIGKILL'),
      (durationS + 20) * 1000,
    );
    child.once('exit', (code) => {
      clearTimeout(killer);
      if (code === 0) resolve({ out, err });
      else reject(new Error(`${binary} exited with ${code}: ${err || out}`));
    });
  });
}
