// `npm run loadtest -- <scenario> [options]` — load-tests a Sluice service started as a separate
// process, after measuring the scenario's ceiling in the same run with the same client settings,
// and reports req/s, p50/p99, the client used and the ratio to the ceiling, in
// loadtest/reports/<scenario>-<timestamp>.json with its chart (.svg) beside it (loadtest/report.ts).
//
// Options: --duration S (default 10) · --connections N · --pipelining N (HTTP pipelining; for
// gRPC, streams/in-flight calls per connection) · --threads N (client threads: autocannon
// workers, wrk -t, h2load -t) · --grpc-procs K (grpc-js generator processes, default max(2, cores))
// · --client NAME[,NAME] (autocannon, wrk, h2load, grpc-js; default: every available one that
// fits the protocol, h2load preferred over grpc-js) · --server-threads N (SLUICE_THREADS)
// · --transport uws|node (SLUICE_HTTP_TRANSPORT for the Sluice server; with node, the uWS HTTP
// ceilings give way to their bare node:http counterparts, node-hello and node-echo)
// · --no-ceiling · --list · --pin (servers on core 0, this runner and its clients on core 1)
// · --cpu-prof DIR (the Sluice server runs with V8's --cpu-prof into DIR; the top of each
// profile is printed after the run).
// Scenarios live in loadtest/scenarios/<name>.ts (see loadtest/types.ts). Every child process
// is killed by pid when the run ends, fails or is interrupted; every client run is bounded.

import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  createUnaryClient,
  grpcFrame,
  GrpcError,
  loadProto,
  serviceDefinition,
  statusName,
} from '../src/core/grpc/index.js';
import { runAutocannon } from './clients/autocannon.js';
import { onPath } from './clients/detect.js';
import { runGrpcJs } from './clients/grpc-js.js';
import { runH2load } from './clients/h2load.js';
import { resolveHttpLoad } from './clients/http-body.js';
import type { ClientName, LoadOptions, LoadResult } from './clients/types.js';
import { runWrk } from './clients/wrk.js';
import { ECHO_LOAD, HELLO_LOAD, RLS_LOAD } from './defaults.js';
import { profileTop, renderProfileTop } from './profile-top.js';
import { ratioRows, writeLoadtestReport, type TargetReport } from './report.js';
import { freePort, startChild, waitForPortLine, waitUntilReady, type Child } from './process.js';
import type { CeilingName, GrpcLoad, HttpLoad, Scenario, ScenarioFile } from './types.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');

interface Args {
  scenario: string | undefined;
  durationS: number;
  connections: number | undefined;
  pipelining: number | undefined;
  threads: number;
  grpcProcs: number;
  clients: ClientName[] | undefined;
  serverThreads: number | undefined;
  ceiling: boolean;
  list: boolean;
  pin: boolean;
  cpuProfDir: string | undefined;
  transport: 'uws' | 'node' | undefined;
}

function fail(message: string): never {
  process.stderr.write(`loadtest: ${message}\n`);
  process.exit(2);
}

function positiveInt(flag: string, raw: string | undefined): number {
  const n = Number(raw);
  if (raw === undefined || !Number.isInteger(n) || n < 1)
    fail(`${flag} needs a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

const CLIENTS: readonly ClientName[] = ['autocannon', 'wrk', 'h2load', 'grpc-js'];

function parseArgs(argv: string[]): Args {
  const args: Args = {
    scenario: undefined,
    durationS: 10,
    connections: undefined,
    pipelining: undefined,
    threads: 1,
    grpcProcs: Math.max(2, cpus().length),
    clients: undefined,
    serverThreads: undefined,
    ceiling: true,
    list: false,
    pin: false,
    cpuProfDir: undefined,
    transport: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] =
      a.startsWith('--') && a.includes('=')
        ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]
        : [a, undefined];
    const value = (): string | undefined => inline ?? argv[++i];
    switch (flag) {
      case '--duration':
        args.durationS = positiveInt(flag, value());
        break;
      case '--connections':
        args.connections = positiveInt(flag, value());
        break;
      case '--pipelining':
      case '--streams':
        args.pipelining = positiveInt(flag, value());
        break;
      case '--threads':
        args.threads = positiveInt(flag, value());
        break;
      case '--grpc-procs':
        args.grpcProcs = positiveInt(flag, value());
        break;
      case '--server-threads':
        args.serverThreads = positiveInt(flag, value());
        break;
      case '--client': {
        const names = (value() ?? '').split(',').filter(Boolean);
        for (const n of names)
          if (!CLIENTS.includes(n as ClientName))
            fail(`unknown client ${JSON.stringify(n)} (known: ${CLIENTS.join(', ')})`);
        args.clients = names as ClientName[];
        break;
      }
      case '--transport': {
        const name = value();
        if (name !== 'uws' && name !== 'node')
          fail(`--transport needs uws or node, got ${JSON.stringify(name)}`);
        args.transport = name;
        break;
      }
      case '--no-ceiling':
        args.ceiling = false;
        break;
      case '--list':
        args.list = true;
        break;
      case '--pin':
        args.pin = true;
        break;
      case '--cpu-prof': {
        const dir = value();
        if (!dir || dir.startsWith('--')) fail('--cpu-prof needs a directory');
        args.cpuProfDir = resolve(dir);
        break;
      }
      default:
        if (a.startsWith('-')) fail(`unknown option ${a}`);
        if (args.scenario) fail(`only one scenario per run (got ${args.scenario} and ${a})`);
        args.scenario = a;
    }
  }
  return args;
}

function listScenarios(): string[] {
  return readdirSync(join(here, 'scenarios'))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.slice(0, -3))
    .sort();
}

// ---- targets -------------------------------------------------------------------------------

/** How server processes are started: pinned to core 0 with --pin, with extra node flags. */
interface ServerLaunch {
  pin: boolean;
  nodeArgs: string[];
}

function serverCommand(launch: ServerLaunch, args: string[]): { command: string; args: string[] } {
  const node = [...launch.nodeArgs, ...args];
  // taskset execs node in place, so the pid the runner stops is node's own.
  return launch.pin
    ? { command: 'taskset', args: ['-c', '0', process.execPath, ...node] }
    : { command: process.execPath, args: node };
}

interface Target {
  label: string;
  kind: 'ceiling' | 'scenario';
  ceiling?: CeilingName;
  load: HttpLoad | GrpcLoad;
  /** Starts the process and returns its base address; stop() ends it. */
  start(): Promise<{ address: string; child: Child; cleanup?: () => void }>;
}

function ceilingLoad(name: CeilingName, scenarioLoad: HttpLoad | GrpcLoad | undefined): HttpLoad | GrpcLoad {
  if (name === 'grpc-constant') return scenarioLoad?.kind === 'grpc' ? scenarioLoad : RLS_LOAD;
  if (name === 'uws-hello' || name === 'node-hello')
    return {
      ...HELLO_LOAD,
      ...(scenarioLoad?.kind === 'http' && scenarioLoad.headers ? { headers: scenarioLoad.headers } : {}),
    };
  // The echo ceiling receives the scenario's very body and headers.
  if (scenarioLoad?.kind === 'http' && scenarioLoad.body !== undefined) {
    const echo: HttpLoad = { kind: 'http', method: 'POST', path: '/echo', body: scenarioLoad.body };
    if (scenarioLoad.headers) echo.headers = scenarioLoad.headers;
    return echo;
  }
  return ECHO_LOAD;
}

/** A node:http-served scenario is measured against bare node:http, a uWS-served one against uWS. */
function ceilingFor(name: CeilingName, transport: 'uws' | 'node' | undefined): CeilingName {
  if (transport !== 'node') return name;
  if (name === 'uws-echo') return 'node-echo';
  if (name === 'uws-hello') return 'node-hello';
  return name;
}

function ceilingTarget(
  name: CeilingName,
  scenarioLoad: HttpLoad | GrpcLoad | undefined,
  launch: ServerLaunch,
): Target {
  return {
    label: `ceiling ${name}`,
    kind: 'ceiling',
    ceiling: name,
    load: ceilingLoad(name, scenarioLoad),
    async start() {
      const child = startChild({
        name: `ceiling ${name}`,
        ...serverCommand({ ...launch, nodeArgs: [] }, [
          '--import',
          'tsx',
          join(here, 'ceilings', `${name}.ts`),
        ]),
        env: { ...process.env, PORT: '0', LOG_LEVEL: 'warn' },
        cwd: root,
      });
      const port = await waitForPortLine(child, 30_000);
      return { address: `127.0.0.1:${port}`, child };
    },
  };
}

function scenarioTarget(
  name: string,
  scenario: Scenario,
  serverThreads: number | undefined,
  launch: ServerLaunch,
  transport: 'uws' | 'node' | undefined,
): Target {
  const spec = scenario.server!;
  return {
    label: `scenario ${name}`,
    kind: 'scenario',
    load: scenario.load,
    async start() {
      const tmp = mkdtempSync(join(tmpdir(), `sluice-loadtest-${name}-`));
      try {
        const env: NodeJS.ProcessEnv = {
          ...process.env,
          SLUICE_DATA_DIR: join(tmp, 'data'),
          LOG_LEVEL: 'warn',
          ...spec.env,
        };
        if (serverThreads !== undefined) env['SLUICE_THREADS'] = String(serverThreads);
        if (transport !== undefined) env['SLUICE_HTTP_TRANSPORT'] = transport;
        const ports: Record<string, number> = {};
        for (const key of spec.portEnv) {
          ports[key] = await freePort();
          env[key] = String(ports[key]);
        }
        if (spec.prepare) Object.assign(env, await spec.prepare(tmp));
        const port = ports[spec.target];
        if (port === undefined)
          throw new Error(`scenario ${name}: target ${spec.target} is not one of portEnv`);
        const child = startChild({
          name: `sluice ${spec.args.join(' ')}`,
          ...serverCommand(launch, [join(root, 'bin', 'sluice.js'), ...spec.args]),
          env,
          cwd: root,
        });
        const readyPort = spec.readyPortEnv ? ports[spec.readyPortEnv] : port;
        if (readyPort === undefined)
          throw new Error(`scenario ${name}: readyPortEnv ${spec.readyPortEnv} is not one of portEnv`);
        try {
          await waitUntilReady(child, readyPort, spec.readyPath, 60_000);
        } catch (err) {
          await child.stop(1000);
          throw err;
        }
        return {
          address: `127.0.0.1:${port}`,
          child,
          cleanup: () => rmSync(tmp, { recursive: true, force: true }),
        };
      } catch (err) {
        rmSync(tmp, { recursive: true, force: true });
        throw err;
      }
    },
  };
}

// ---- running -------------------------------------------------------------------------------

function clientsFor(
  load: HttpLoad | GrpcLoad,
  asked: ClientName[] | undefined,
  available: Record<ClientName, string | undefined>,
): { use: ClientName[]; skipped: string[] } {
  const fits: ClientName[] =
    load.kind === 'http' ? ['autocannon', 'wrk'] : available.h2load ? ['h2load'] : ['grpc-js'];
  const wanted = asked
    ? asked.filter((c) =>
        load.kind === 'http' ? c === 'autocannon' || c === 'wrk' : c === 'h2load' || c === 'grpc-js',
      )
    : fits;
  const use: ClientName[] = [];
  const skipped: string[] = [];
  for (const c of wanted) {
    if (available[c]) use.push(c);
    else skipped.push(`${c} (not installed)`);
  }
  return { use, skipped };
}

async function checkGrpcOnce(address: string, load: GrpcLoad): Promise<string> {
  const def = serviceDefinition(loadProto(load.protoFiles), load.service);
  const client = createUnaryClient(address, def, load.method);
  try {
    await client.call(load.request, { timeoutMs: 10_000 });
    return 'OK';
  } catch (err) {
    if (err instanceof GrpcError)
      throw new Error(`the scenario's gRPC request fails with ${statusName(err.status)}: ${err.message}`);
    throw err;
  } finally {
    client.close();
  }
}

function grpcRequestFrame(load: GrpcLoad): { path: string; frame: Buffer } {
  const root = loadProto(load.protoFiles);
  const method = root.lookupService(load.service).methods[load.method];
  if (!method) throw new Error(`${load.service} has no method ${load.method}`);
  const type = root.lookupType(
    method.requestType.startsWith('.') ? method.requestType.slice(1) : method.requestType,
  );
  const err = type.verify(type.fromObject(load.request));
  if (err) throw new Error(`gRPC request does not fit ${type.fullName}: ${err}`);
  return {
    path: `/${load.service}/${load.method}`,
    frame: grpcFrame(type.encode(type.fromObject(load.request)).finish()),
  };
}

async function runClient(
  client: ClientName,
  address: string,
  load: HttpLoad | GrpcLoad,
  options: LoadOptions,
  grpcProcs: number,
  available: Record<ClientName, string | undefined>,
): Promise<LoadResult> {
  if (load.kind === 'http') {
    const http = resolveHttpLoad(load);
    if (client === 'wrk') return runWrk(available.wrk!, `http://${address}`, http, options);
    return runAutocannon(`http://${address}`, http, options);
  }
  if (client === 'h2load') {
    const { path, frame } = grpcRequestFrame(load);
    return runH2load(available.h2load!, address, path, frame, options);
  }
  return runGrpcJs(address, load, options, grpcProcs);
}

async function measure(
  target: Target,
  clients: ClientName[],
  options: LoadOptions,
  args: Args,
  available: Record<ClientName, string | undefined>,
): Promise<TargetReport> {
  const load = target.load;
  const report: TargetReport = {
    label: target.label,
    kind: target.kind,
    load: load.kind === 'http' ? `${load.method} ${load.path}` : `gRPC ${load.service}/${load.method}`,
    results: [],
  };
  if (target.ceiling) report.ceiling = target.ceiling;
  process.stderr.write(`loadtest: starting ${target.label}\n`);
  let started: Awaited<ReturnType<Target['start']>> | undefined;
  try {
    started = await target.start();
    report.pid = started.child.pid;
    if (load.kind === 'grpc') await checkGrpcOnce(started.address, load);
    for (const client of clients) {
      process.stderr.write(`loadtest:   ${client} → ${started.address} for ${options.durationS}s\n`);
      report.results.push(await runClient(client, started.address, load, options, args.grpcProcs, available));
    }
  } catch (err) {
    report.error = (err as Error).message;
    process.stderr.write(`loadtest:   ${target.label} failed: ${report.error}\n`);
  } finally {
    await started?.child.stop(5000);
    started?.cleanup?.();
  }
  return report;
}

// ---- output --------------------------------------------------------------------------------

function fmt(n: number | undefined, digits = 2): string {
  return n === undefined || Number.isNaN(n) ? '—' : n.toFixed(digits);
}

function printTable(targets: TargetReport[]): void {
  const ratios = ratioRows(targets);
  const lines = [
    '',
    'target                         client       req/s        p50 ms   p99 ms   mean ms  failures  ratio  settings',
  ];
  for (const t of targets) {
    if (t.error) lines.push(`${t.label.padEnd(30)} FAILED: ${t.error.split('\n')[0]}`);
    if (t.skipped) lines.push(`${t.label.padEnd(30)} skipped: ${t.skipped}`);
    for (const r of t.results) {
      const ratio =
        t.kind === 'scenario'
          ? ratios.find((x) => x.client === r.client)?.ratio
          : t.kind === 'ceiling'
            ? 1
            : undefined;
      lines.push(
        `${t.label.padEnd(30)} ${r.client.padEnd(12)} ${Math.round(r.rps).toLocaleString('en-US').padStart(10)}  ${fmt(r.p50Ms).padStart(8)} ${fmt(r.p99Ms).padStart(8)} ${fmt(r.meanMs).padStart(8)}  ${String(r.failures).padStart(8)}  ${ratio === undefined ? '   —' : ratio.toFixed(3)}  ${r.settings}${r.notes ? ` (${r.notes})` : ''}`,
      );
    }
  }
  process.stdout.write(lines.join('\n') + '\n\n');
}

// ---- main ----------------------------------------------------------------------------------

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.list || !args.scenario) {
    process.stdout.write(
      `scenarios: ${listScenarios().join(', ')}\nusage: npm run loadtest -- <scenario> [--duration 10] [--connections N] [--threads N] [--client wrk,autocannon]\n`,
    );
    process.exit(args.scenario || args.list ? 0 : 2);
  }
  if (!listScenarios().includes(args.scenario))
    fail(`no scenario ${JSON.stringify(args.scenario)}; known: ${listScenarios().join(', ')}`);
  const mod = (await import(pathToFileURL(join(here, 'scenarios', `${args.scenario}.ts`)).href)) as {
    default?: ScenarioFile;
  };
  const file = mod.default;
  if (!file) fail(`scenarios/${args.scenario}.ts has no default export`);

  const available: Record<ClientName, string | undefined> = {
    autocannon: 'builtin',
    'grpc-js': 'builtin',
    wrk: onPath('wrk'),
    h2load: onPath('h2load'),
  };
  const startedAt = new Date();

  if (args.pin) {
    if (!onPath('taskset')) fail('--pin needs taskset (util-linux)');
    if (cpus().length < 2) fail('--pin needs at least 2 cores');
    // This runner (autocannon's workers, wrk, h2load and the grpc-js generators inherit it) on
    // core 1; every server is started on core 0.
    const pinned = spawnSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
    if (pinned.status !== 0) fail('taskset could not pin the runner to core 1');
  }
  const launch: ServerLaunch = { pin: args.pin, nodeArgs: [] };
  if (args.cpuProfDir) {
    mkdirSync(args.cpuProfDir, { recursive: true });
    launch.nodeArgs = ['--cpu-prof', `--cpu-prof-dir=${args.cpuProfDir}`];
  }
  const profilesBefore = new Set(args.cpuProfDir ? readdirSync(args.cpuProfDir) : []);

  const targets: Target[] = [];
  if ('ceilingsOnly' in file) {
    for (const c of file.ceilingsOnly) targets.push(ceilingTarget(c, undefined, launch));
  } else {
    if (!file.server) fail(`scenario ${args.scenario} has no server and is not a ceilings-only scenario`);
    // The server runs from dist/: build once up front so the build is not part of a timed start.
    const build = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const m = await import('./scripts/build-if-needed.js'); await m.ensureBuilt();",
      ],
      { cwd: root, stdio: 'inherit' },
    );
    if (build.status !== 0) fail('build failed');
    if (args.ceiling)
      targets.push(ceilingTarget(ceilingFor(file.ceiling, args.transport), file.load, launch));
    targets.push(scenarioTarget(args.scenario, file, args.serverThreads, launch, args.transport));
  }

  const reports: TargetReport[] = [];
  const skippedClients = new Set<string>();
  for (const target of targets) {
    const isGrpc = target.load.kind === 'grpc';
    const options: LoadOptions = {
      durationS: args.durationS,
      connections: args.connections ?? (isGrpc ? 4 : 100),
      pipelining: args.pipelining ?? (isGrpc ? 25 : 1),
      threads: args.threads,
    };
    const { use, skipped } = clientsFor(target.load, args.clients, available);
    for (const s of skipped) skippedClients.add(s);
    if (use.length === 0 && skipped.length === 0 && target.kind === 'ceiling' && 'ceilingsOnly' in file) {
      // --client narrowed the run to the other protocol: leave this ceiling out, visibly.
      reports.push({
        label: target.label,
        kind: target.kind,
        load: '',
        results: [],
        skipped: 'no requested client fits',
      });
      continue;
    }
    if (use.length === 0) {
      reports.push({
        label: target.label,
        kind: target.kind,
        load: '',
        results: [],
        error: `no usable client (${skipped.join(', ') || 'none asked fits'})`,
      });
      continue;
    }
    reports.push(await measure(target, use, options, args, available));
  }

  printTable(reports);
  if (args.cpuProfDir) {
    for (const f of readdirSync(args.cpuProfDir).sort()) {
      if (!f.endsWith('.cpuprofile') || profilesBefore.has(f)) continue;
      const path = join(args.cpuProfDir, f);
      // Only the load window of the scenario server (its clients ran one after another).
      const scenarioClients = reports.find((r) => r.kind === 'scenario')?.results.length ?? 1;
      const top = profileTop(path, 15, root, scenarioClients * args.durationS * 1000);
      process.stdout.write(
        `profile ${path} (last ${scenarioClients * args.durationS} s)\n${renderProfileTop(top)}\n\n`,
      );
    }
  }
  if (skippedClients.size > 0) process.stdout.write(`clients not used: ${[...skippedClients].join(', ')}\n`);
  if (!available.wrk)
    process.stdout.write(
      "note: wrk is not installed; HTTP ceilings near 60k req/s may be autocannon's own limit (apt-get install wrk)\n",
    );
  if (!available.h2load)
    process.stdout.write(
      'note: h2load is not installed; gRPC figures come from grpc-js generator processes (apt-get install nghttp2-client)\n',
    );

  const reportDir = process.env['LOADTEST_REPORT_DIR'] || join(here, 'reports');
  const written = await writeLoadtestReport(reportDir, {
    scenario: args.scenario,
    startedAt: startedAt.toISOString(),
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model.trim() ?? 'unknown', node: process.version },
    args,
    clientsAvailable: { wrk: !!available.wrk, h2load: !!available.h2load },
    targets: reports,
    ratios: ratioRows(reports),
  });
  process.stdout.write(`report: ${relative(root, written.json)}\nchart: ${relative(root, written.svg)}\n`);
  process.exit(reports.some((r) => r.error) ? 1 : 0);
}

await main();
