// `sluice <command>`: the single entry point for running services, the rate limit client and
// API key management.

import { parseArgs } from 'node:util';
import { parseScopeList, ScopeError, SCOPES } from './core/auth/index.js';
import { StorageFullError } from './core/disk/reserve.js';
import { SERVICE_NAMES, type ServiceName } from './core/service.js';
import { DataDirError, EnvReader, SettingsError } from './core/settings/index.js';

const HELP = `sluice — rate limit decisions, streams and automation on one Node.js runtime

Usage: sluice <command> [options]

Commands:
  serve               run all three services (rate limit, streams, automation)
  ratelimit           run the rate limit service only
  streams             run the streams service only
  automation          run the automation service only
  ratelimit-client    send one decision request over gRPC
                        -dial_string host:port (default localhost:8081) -domain D
                        -descriptors k=v[,k2=v2] (repeatable) [-hits_addend N]
  keys create         create an API key; prints the token once
                        [--tenant T] [--user U] [--name N] [--scopes s1,s2]
                        without --scopes the key is an admin key; an empty or
                        unknown scope is refused. Scopes:
${Object.entries(SCOPES)
  .map(([name, grants]) => `                          ${name.padEnd(17)} ${grants}`)
  .join('\n')}
  keys list           list keys (never their secrets)
  keys revoke <id>    revoke a key
                      keys are in PostgreSQL (shared by every automation node)
                      when AUTOMATION_DATABASE_URL is set, in the JetStream
                      bucket <STREAMS_NATS_PREFIX>_keys (shared by every streams
                      node) with STREAMS_BACKEND=jetstream, else in this node's
                      data directory; --store lmdb|postgres|jetstream picks one
  keys ... --init     create the data directory's key store when there is none
                      (without it, a folder holding no server data is refused)
  backup <dir>        copy the local data (LMDB, registry, files) into a new folder,
                      while the server runs; see docs/deployment.md
  restore <dir>       put a backup back into the data directory (server stopped)
                        [--force] replace what the data directory holds

Options for serve/ratelimit/streams/automation:
  --threads N         front-end threads (default: SLUICE_THREADS or the number of cores)

Settings come from environment variables; see README.md and docs/.
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(HELP);
    return command ? 0 : 1;
  }
  if (command === 'serve' || (SERVICE_NAMES as readonly string[]).includes(command)) {
    const { values } = parseArgs({
      args: rest,
      options: { threads: { type: 'string' }, help: { type: 'boolean' } },
    });
    if (values.help) {
      process.stdout.write(HELP);
      return 0;
    }
    const threads = values.threads === undefined ? undefined : Number(values.threads);
    if (threads !== undefined && (!Number.isInteger(threads) || threads < 1)) {
      process.stderr.write(`sluice: --threads must be a positive integer, got ${values.threads}\n`);
      return 2;
    }
    const services = command === 'serve' ? [...SERVICE_NAMES] : [command as ServiceName];
    const { runSupervisor } = await import('./core/supervisor.js');
    return runSupervisor({ services, ...(threads === undefined ? {} : { threads }) });
  }
  if (command === 'ratelimit-client') {
    const { runRatelimitClient } = await import('./ratelimit/client.js');
    return runRatelimitClient(rest);
  }
  if (command === 'keys') return keysCommand(rest);
  if (command === 'backup') return (await import('./backup/command.js')).backupCommand(rest);
  if (command === 'restore') return (await import('./backup/command.js')).restoreCommand(rest);
  process.stderr.write(`sluice: unknown command ${JSON.stringify(command)}\n\n${HELP}`);
  return 2;
}

async function keysCommand(argv: string[]): Promise<number> {
  // LMDB, PostgreSQL or the JetStream bucket, as the settings (or --store) say: src/key-admin.ts.
  const { chooseKeyStore, KeyStoreChoiceError, openKeyAdmin, takeStoreOption } =
    await import('./key-admin.js');
  const init = argv.includes('--init');
  const { store: wanted, rest: args } = takeStoreOption(argv.filter((arg) => arg !== '--init'));
  const [sub, ...rest] = args;
  const env = new EnvReader();
  let choice;
  try {
    choice = await chooseKeyStore(env, wanted);
  } catch (error) {
    if (!(error instanceof KeyStoreChoiceError)) throw error;
    process.stderr.write(`sluice keys: ${error.message}\n`);
    return 2;
  }
  // An unreachable database or cluster is one line, not a stack trace.
  const store = await openKeyAdmin(env, choice, { init }).catch((error: Error) => error);
  // A folder without server data: the message names it and the setting (exit 1, below).
  if (store instanceof DataDirError) throw store;
  if (store instanceof Error) {
    process.stderr.write(`sluice keys: ${store.message}\n`);
    return 1;
  }
  try {
    if (sub === 'create') {
      const { values } = parseArgs({
        args: rest,
        options: {
          tenant: { type: 'string' },
          user: { type: 'string' },
          name: { type: 'string' },
          scopes: { type: 'string' },
        },
      });
      // Only a missing --scopes means admin; `--scopes ""` or `--scopes ,` is a mistake, and
      // must never widen to the strongest key.
      let scopes: string[] | undefined;
      try {
        scopes = values.scopes === undefined ? undefined : parseScopeList(values.scopes);
      } catch (error) {
        if (!(error instanceof ScopeError)) throw error;
        process.stderr.write(
          `sluice keys create: --scopes: ${error.message} (omit --scopes for an admin key); no key created\n`,
        );
        return 2;
      }
      const created = await store.create({
        ...(values.tenant ? { tenant: values.tenant } : {}),
        ...(values.user ? { user: values.user } : {}),
        ...(values.name ? { name: values.name } : {}),
        ...(scopes ? { scopes } : {}),
      });
      process.stdout.write(`${JSON.stringify(created.record)}\ntoken (shown once): ${created.token}\n`);
      return 0;
    }
    if (sub === 'list') {
      for (const key of await store.list()) process.stdout.write(JSON.stringify(key) + '\n');
      return 0;
    }
    // revoke
    const id = rest[0];
    if (!id) {
      process.stderr.write('sluice keys revoke: a key id is required\n');
      return 2;
    }
    if (!(await store.revoke(id))) {
      process.stderr.write(`sluice keys revoke: no key with id ${id}\n`);
      return 1;
    }
    process.stdout.write(`revoked ${id}\n`);
    return 0;
  } finally {
    await store.close();
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  if (error instanceof DataDirError) {
    process.stderr.write(`sluice: ${error.message}\n`);
    process.exitCode = 1;
  } else if (error instanceof SettingsError || (error as Error).name === 'SettingsError') {
    process.stderr.write(`sluice: ${(error as Error).message}\n`);
    process.exitCode = 2;
  } else if ((error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS_')) {
    process.stderr.write(`sluice: ${(error as Error).message}\n`);
    process.exitCode = 2;
  } else if (error instanceof StorageFullError) {
    process.stderr.write(`sluice: ${error.message}\n`);
    process.exitCode = 1;
  } else {
    throw error;
  }
}
