// Browser tests of the web console: Debian's Chromium driven by playwright-core (no browser
// download), headless, no network but loopback, a fresh profile per launch. Any page console
// error or CSP violation fails the test (assertCleanPage), and flows end with a screenshot under
// test-output/console/. Also starts `sluice serve` (or one service) on free ports with the
// console built.

import { strict as assert } from 'node:assert';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { freePort } from './context.js';
import { freeSluicePorts, type SluicePorts as ServePorts } from './sluice-process.js';
import { HANG_MS } from './wait.js';

export const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOT_DIR = join('test-output', 'console');

/** Why browser tests cannot run here (for `it(..., { skip })`), or undefined. */
export function browserSkipReason(): string | undefined {
  return existsSync(CHROMIUM)
    ? undefined
    : `${CHROMIUM} is missing: apt-get install chromium (.ci/run installs it)`;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // launch() gives every browser a fresh temporary profile (user-data-dir) of its own.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
      // Loopback only: every other host name fails to resolve.
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1',
    ],
    timeout: HANG_MS,
  });
}

export interface WatchedPage {
  page: Page;
  /** Console errors, uncaught exceptions and CSP violations seen so far. */
  problems: string[];
  /** Messages matching one of these are expected (e.g. a service stopped on purpose). */
  allow: RegExp[];
  close(): Promise<void>;
}

/** A page at 1280×800 (or `viewport`) whose errors are collected for assertCleanPage. */
export async function openPage(
  browser: Browser,
  options: { viewport?: { width: number; height: number } } = {},
): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 1280, height: 800 } });
  context.setDefaultTimeout(HANG_MS);
  const page = await context.newPage();
  const watched: WatchedPage = {
    page,
    problems: [],
    allow: [],
    close: () => context.close(),
  };
  const note = (text: string) => {
    if (!watched.allow.some((re) => re.test(text))) watched.problems.push(text);
  };
  page.on('console', (message) => {
    if (message.type() === 'error' || /Content Security Policy/i.test(message.text()))
      note(`console ${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => note(`uncaught: ${error.message}`));
  return watched;
}

export function assertCleanPage(watched: WatchedPage): void {
  assert.deepEqual(watched.problems, [], 'the page logged errors or CSP violations');
}

/** Saves a PNG of the page under test-output/console/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: false });
  return path;
}

/** Builds dist/console when console/ changed since its last build. */
export function ensureConsoleBuilt(): void {
  const result = spawnSync(process.execPath, ['scripts/build-console.js', '--if-needed'], {
    encoding: 'utf8',
  });
  assert.equal(result.status, 0, `console build failed:\n${result.stdout}\n${result.stderr}`);
}

export interface RunningSluice {
  /** HTTP base URLs by service (`http://127.0.0.1:<port>`). */
  urls: { ratelimit: string; streams: string; automation: string };
  /** URL of the console page this process serves. */
  console: string;
  /** An admin key (SLUICE_ADMIN_TOKEN). */
  token: string;
  dataDir: string;
  /** The ports it listens on, to start it again on the same ones (`startSluice({ ports })`). */
  ports: SluicePorts;
  process: ChildProcess;
  output(): string;
  stop(): Promise<number | null>;
}

/** The listeners of `sluice serve`, and the metrics one the browser tests also move. */
export type SluicePorts = ServePorts & { PROMETHEUS_PORT: number };

/**
 * `sluice serve` (or `sluice <service>`) as a child process on free ports with the console built;
 * `env` adds settings (a rate limit config folder …). Resolves when the start banner is printed.
 */
export async function startSluice(
  options: {
    command?: 'serve' | 'streams' | 'ratelimit' | 'automation';
    env?: Record<string, string>;
    dataDir?: string;
    /** A restart: the same ports and key as a process stopped before (with its `dataDir`). */
    ports?: SluicePorts;
    token?: string;
  } = {},
): Promise<RunningSluice> {
  ensureConsoleBuilt();
  const command = options.command ?? 'serve';
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'sluice-console-'));
  const token = options.token ?? 'console-test-' + Math.random().toString(36).slice(2);
  const ports: SluicePorts = options.ports ?? {
    ...(await freeSluicePorts()),
    PROMETHEUS_PORT: await freePort(),
  };
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', command, '--threads', '1'], {
    env: {
      ...process.env,
      SLUICE_DATA_DIR: dataDir,
      SLUICE_ADMIN_TOKEN: token,
      HOST: '127.0.0.1',
      GRPC_HOST: '127.0.0.1',
      DEBUG_HOST: '127.0.0.1',
      STREAMS_HOST: '127.0.0.1',
      AUTOMATION_HOST: '127.0.0.1',
      PROMETHEUS_ADDR: `127.0.0.1:${ports.PROMETHEUS_PORT}`,
      ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
      LOG_LEVEL: 'warn',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const started = await Promise.race([
    new Promise<boolean>((resolve) => {
      const check = () => {
        if (/listening on \d+ front-end thread/.test(out)) resolve(true);
      };
      child.stdout.on('data', check);
      check();
    }),
    exited.then(() => false),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), HANG_MS).unref()),
  ]);
  if (!started) {
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    throw new Error(`sluice ${command} did not start:\n${out}`);
  }
  const url = (port: number) => `http://localhost:${port}`;
  const urls = {
    ratelimit: url(ports.PORT),
    streams: url(ports.STREAMS_PORT),
    automation: url(ports.AUTOMATION_PORT),
  };
  const consoleOn = command === 'serve' ? urls.automation : urls[command];
  let stopped: Promise<number | null> | undefined;
  return {
    urls,
    console: `${consoleOn}/console/`,
    token,
    dataDir,
    ports,
    process: child,
    output: () => out,
    stop() {
      stopped ??= (async () => {
        if (child.exitCode === null) child.kill('SIGTERM');
        const code = await exited;
        if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
        return code;
      })();
      return stopped;
    },
  };
}

/** Signs in on the console page with `token` and waits for the shell to show the tenant. */
export async function signIn(page: Page, consoleUrl: string, token: string): Promise<void> {
  await page.goto(consoleUrl);
  await page.getByLabel('API key').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** A key of the running Sluice's tenant `default` with these scopes, made by `sluice keys create`. */
export async function createKey(
  sluice: RunningSluice,
  scopes: string,
  name = 'console-test',
): Promise<string> {
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'src/cli.ts', 'keys', 'create', '--name', name, '--scopes', scopes],
    { encoding: 'utf8', env: { ...process.env, SLUICE_DATA_DIR: sluice.dataDir, LOG_LEVEL: 'silent' } },
  );
  assert.equal(result.status, 0, `keys create failed:\n${result.stdout}\n${result.stderr}`);
  const token = /token \(shown once\): (\S+)/.exec(result.stdout)?.[1];
  assert.ok(token, `no token in:\n${result.stdout}`);
  return token;
}

let axeSource: string | undefined;

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/**
 * Runs axe-core (WCAG 2 A/AA rules) on the page as it is now and fails on any serious or critical
 * violation, listing each with the elements it names. The script goes in through the DevTools
 * protocol (page.evaluate), which the page's Content-Security-Policy does not govern, so the
 * console's CSP stays as strict in the test as in production.
 */
export async function assertAccessible(page: Page, what: string): Promise<void> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  const present = await page.evaluate<boolean>("typeof window.axe === 'object'");
  if (!present) await page.evaluate(axeSource);
  const violations = await page.evaluate<AxeViolation[]>(
    `window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }, resultTypes: ['violations'] })
      .then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })))`,
  );
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    serious.map(
      (v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`,
    ),
    [],
    `accessibility violations on ${what}`,
  );
}
