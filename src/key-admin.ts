// Which key store `sluice keys` manages. It reads the settings the services read:
//   AUTOMATION_DATABASE_URL set     → PostgreSQL, the automation nodes' keys;
//   STREAMS_BACKEND=jetstream       → the `<STREAMS_NATS_PREFIX>_keys` bucket, the streams nodes' keys;
//   neither                         → this node's LMDB key store under SLUICE_DATA_DIR (the default).
// With both shared stores configured the command does not guess: `--store postgres|jetstream|lmdb`
// (accepted anywhere after `keys`) picks one; it also picks LMDB when a shared store is set.

import { openKeyStore, type KeyAdmin } from './core/auth/index.js';
import { CodedError } from './core/errors.js';
import { loadCoreSettings, requireDataDir, type EnvReader } from './core/settings/index.js';

export const KEY_STORES = ['lmdb', 'postgres', 'jetstream'] as const;
export type KeyStoreName = (typeof KEY_STORES)[number];

/** A wrong or missing --store: the CLI prints the message and exits 2. */
export class KeyStoreChoiceError extends CodedError {
  constructor(message: string) {
    super('key_store_choice', message);
  }
}

/** `--store X` / `--store=X` taken out of the arguments; the rest stays in order. */
export function takeStoreOption(args: readonly string[]): { store: string | undefined; rest: string[] } {
  const rest: string[] = [];
  let store: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--store') {
      store = args[++i] ?? '';
    } else if (arg.startsWith('--store=')) {
      store = arg.slice('--store='.length);
    } else rest.push(arg);
  }
  return { store, rest };
}

/** Which store the settings (and --store) select. */
export async function chooseKeyStore(env: EnvReader, wanted: string | undefined): Promise<KeyStoreName> {
  if (wanted !== undefined && !(KEY_STORES as readonly string[]).includes(wanted)) {
    throw new KeyStoreChoiceError(
      `--store must be one of ${KEY_STORES.join(', ')}, got ${JSON.stringify(wanted)}`,
    );
  }
  const core = loadCoreSettings(env);
  const { loadAutomationSettings } = await import('./automation/settings.js');
  const postgres = loadAutomationSettings(env, core).database !== undefined;
  const { loadStreamsSettings } = await import('./streams/settings.js');
  const jetstream = loadStreamsSettings(env).nats !== undefined;
  if (wanted === 'postgres' && !postgres) {
    throw new KeyStoreChoiceError('--store postgres needs AUTOMATION_DATABASE_URL');
  }
  if (wanted === 'jetstream' && !jetstream) {
    throw new KeyStoreChoiceError(
      '--store jetstream needs STREAMS_BACKEND=jetstream and STREAMS_NATS_SERVERS',
    );
  }
  if (wanted !== undefined) return wanted as KeyStoreName;
  if (postgres && jetstream) {
    throw new KeyStoreChoiceError(
      'both AUTOMATION_DATABASE_URL and STREAMS_BACKEND=jetstream are set: choose the key store with ' +
        '--store postgres (keys of the automation service) or --store jetstream (keys of the streams service)',
    );
  }
  return postgres ? 'postgres' : jetstream ? 'jetstream' : 'lmdb';
}

/** `init`: the LMDB store may be created where the data directory holds none (`keys --init`). */
export async function openKeyAdmin(
  env: EnvReader,
  store: KeyStoreName,
  options: { init: boolean } = { init: false },
): Promise<KeyAdmin> {
  const core = loadCoreSettings(env);
  if (store === 'postgres') {
    const { loadAutomationSettings } = await import('./automation/settings.js');
    const database = loadAutomationSettings(env, core).database!;
    return (await import('./automation/pg/key-store.js')).openPgKeyAdmin(database);
  }
  if (store === 'jetstream') {
    const { loadStreamsSettings } = await import('./streams/settings.js');
    const nats = loadStreamsSettings(env).nats!;
    const { openJetStreamKeyStore } = await import('./streams/nats/key-store.js');
    return openJetStreamKeyStore(nats, {
      name: 'sluice-keys',
      follow: false,
      onError: (what, error) => process.stderr.write(`sluice keys: ${what}: ${(error as Error).message}\n`),
    });
  }
  // The server's data directory, found as the server finds it; a folder without server data is
  // refused rather than given a new, empty key store.
  return openKeyStore(requireDataDir(env, { init: options.init }), undefined, core.diskReserveBytes);
}
