// HTTP load with wrk (Debian package `wrk`), when it is on PATH. A Lua script generated per run
// sets the method, headers and body, optionally pipelines requests, and prints its figures as
// one JSON line so nothing depends on wrk's human-readable output.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ResolvedHttpLoad } from './http-body.js';
import { runTool } from './run-tool.js';
import type { LoadOptions, LoadResult } from './types.js';

/** A Lua long-bracket string literal that cannot be closed early by the content. */
function luaString(text: string): string {
  let level = 0;
  while (text.includes(`]${'='.repeat(level)}]`)) level++;
  const eq = '='.repeat(level);
  // A newline right after the opening bracket is dropped by Lua; lead with one so a body
  // starting with a newline keeps it.
  return `[${eq}[\n${text}]${eq}]`;
}

export function wrkScript(load: ResolvedHttpLoad, pipelining: number): string {
  const lines = [`wrk.method = ${luaString(load.method)}`];
  for (const [k, v] of Object.entries(load.headers))
    lines.push(`wrk.headers[ ${luaString(k)} ] = ${luaString(v)}`);
  if (load.body !== undefined) lines.push(`wrk.body = ${luaString(load.body)}`);
  lines.push(`wrk.path = ${luaString(load.path)}`);
  if (pipelining > 1) {
    lines.push(
      'local batch',
      `init = function(args) local r = {} for i = 1, ${pipelining} do r[i] = wrk.format() end batch = table.concat(r) end`,
      'request = function() return batch end',
    );
  }
  // wrk counts only statuses above 399 as errors; when the load accepts other statuses (429 for
  // a rate limiter), a response() hook counts what falls outside them, per thread, summed in done().
  const countByHook = load.okStatus !== undefined;
  if (countByHook) {
    lines.push(
      `local ok = {}`,
      `for _, s in ipairs({ ${load.okStatus!.join(', ')} }) do ok[s] = true end`,
      'bad = 0',
      'local threads = {}',
      'setup = function(thread) table.insert(threads, thread) end',
      'response = function(status, headers, body) if not ok[status] then bad = bad + 1 end end',
    );
  }
  lines.push(
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    countByHook
      ? '  local status = 0 for _, t in ipairs(threads) do status = status + t:get("bad") end'
      : '  local status = e.status',
    '  io.write(string.format(\'WRKJSON {"requests":%.0f,"duration_us":%.0f,"p50_us":%.0f,"p99_us":%.0f,"mean_us":%.1f,"max_us":%.0f,"status":%.0f,"connect":%.0f,"read":%.0f,"write":%.0f,"timeout":%.0f}\\n\',',
    '    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.mean, latency.max,',
    '    status, e.connect, e.read, e.write, e.timeout))',
    'end',
  );
  return lines.join('\n') + '\n';
}

interface WrkFigures {
  requests: number;
  duration_us: number;
  p50_us: number;
  p99_us: number;
  mean_us: number;
  max_us: number;
  status: number;
  connect: number;
  read: number;
  write: number;
  timeout: number;
}

export async function runWrk(
  binary: string,
  baseUrl: string,
  load: ResolvedHttpLoad,
  options: LoadOptions,
): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-wrk-'));
  try {
    const script = join(dir, 'load.lua');
    writeFileSync(script, wrkScript(load, options.pipelining));
    const threads = Math.max(1, Math.min(options.threads, options.connections));
    const args = [
      `-t${threads}`,
      `-c${options.connections}`,
      `-d${options.durationS}s`,
      '--timeout',
      '5s',
      '-s',
      script,
      baseUrl + load.path,
    ];
    const output = (await runTool(binary, args, options.durationS)).out;
    const line = output.split('\n').find((l) => l.startsWith('WRKJSON '));
    if (!line) throw new Error(`wrk printed no figures:\n${output}`);
    const f = JSON.parse(line.slice('WRKJSON '.length)) as WrkFigures;
    const requests = f.requests;
    return {
      client: 'wrk',
      settings: `-t${threads} -c${options.connections} -d${options.durationS}s${options.pipelining > 1 ? ` pipeline ${options.pipelining}` : ''}`,
      requests,
      rps: requests / Math.max(0.001, f.duration_us / 1e6),
      p50Ms: f.p50_us / 1000,
      p99Ms: f.p99_us / 1000,
      meanMs: f.mean_us / 1000,
      maxMs: f.max_us / 1000,
      failures: f.status + f.connect + f.read + f.write + f.timeout,
      ...(options.pipelining > 1 ? { notes: 'pipelined: latency is per batch' } : {}),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
