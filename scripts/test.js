// `npm test`: every test/**/*.test.ts through node:test with tsx as the loader.
// Node 20's --test takes no recursive globs, so the files are listed here.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

function collect(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...collect(path));
    else if (entry.name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

const filters = process.argv.slice(2);
let files = collect('test').sort();
if (filters.length > 0) files = files.filter((f) => filters.some((x) => f.includes(x)));
// Says which Node runs the suite (CI runs it on two release lines).
process.stderr.write(`test: ${files.length} file(s) on Node ${process.version}\n`);
const args = ['--import', 'tsx', '--test', '--test-concurrency=2', ...files.map((f) => relative('.', f))];
const result = spawnSync(process.execPath, args, { stdio: 'inherit', env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' } });
process.exit(result.status ?? 1);
