// One server per port. The front-end threads of one server share their ports (SO_REUSEPORT, so
// the kernel spreads connections), which would also let a second server process join the same
// ports silently and take half of the requests. So the main thread, before any thread starts,
// binds each configured TCP port once WITHOUT SO_REUSEPORT and closes it at once: that bind fails
// with EADDRINUSE whenever any socket holds the port. A busy port stops the start with a message
// naming the setting, the address and, where /proc tells (Linux, same user), the holding process.

import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import type { ServiceDescriptor } from './service.js';
import type { CoreSettings, EnvReader } from './settings/index.js';

/** One TCP listener a server is about to open, and the setting that chose its port. */
export interface PlannedListener {
  readonly service: string;
  /** The environment variable an operator changes to move this listener (e.g. STREAMS_PORT). */
  readonly setting: string;
  readonly host: string;
  readonly port: number;
}

export interface BusyPort extends PlannedListener {
  /** The process holding the port, when it could be found. */
  readonly holder: { readonly pid: number; readonly command: string } | undefined;
}

/**
 * The start's check, once in the main thread before threads start: undefined when every port the
 * services will listen on is free, else the message to print (the start then exits non-zero).
 */
export async function takenPortsMessage(
  services: readonly ServiceDescriptor[],
  env: EnvReader,
  core: CoreSettings,
  threads: number,
): Promise<string | undefined> {
  const planned: PlannedListener[] = [];
  for (const service of services) planned.push(...(await service.listeners(env, core, threads)));
  const busy = await findBusyPorts(planned);
  return busy.length === 0 ? undefined : describeBusyPorts(busy);
}

/**
 * Binds `host:port` exclusively and closes it. Resolves 'busy' on EADDRINUSE; any other error
 * (an address this host does not have, a privileged port) is left for the real listener to
 * report with its own message, so it resolves 'free'.
 */
export function probePort(host: string, port: number): Promise<'free' | 'busy'> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      server.close();
      resolve(error.code === 'EADDRINUSE' ? 'busy' : 'free');
    });
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve('free')));
  });
}

/** The planned listeners whose port another socket holds already (port 0 is never probed). */
export async function findBusyPorts(listeners: readonly PlannedListener[]): Promise<BusyPort[]> {
  const busy: BusyPort[] = [];
  const seen = new Set<string>();
  for (const listener of listeners) {
    const key = `${listener.host}|${listener.port}`;
    if (listener.port === 0 || seen.has(key)) continue;
    seen.add(key);
    if ((await probePort(listener.host, listener.port)) === 'busy')
      busy.push({ ...listener, holder: portHolder(listener.port) });
  }
  return busy;
}

/** The message that stops the start, one line per busy port. */
export function describeBusyPorts(busy: readonly BusyPort[]): string {
  const lines = busy.map((b) => {
    const holder = b.holder ? ` by process ${b.holder.pid} (${b.holder.command})` : ' by another process';
    return (
      `  ${b.setting}: ${displayAddress(b.host, b.port)} (${b.service}) is already in use${holder}; ` +
      `stop that process or set ${b.setting} to a free port`
    );
  });
  return [
    `sluice: cannot start: ${busy.length === 1 ? 'a port is' : 'ports are'} taken ` +
      '(one server per port: a second server would silently share them)',
    ...lines,
  ].join('\n');
}

function displayAddress(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * Best effort, Linux only: the process with a listening TCP socket on `port`, from the socket's
 * inode in /proc/net/tcp{,6} and a scan of /proc/<pid>/fd. undefined when not found (another
 * user's process, no /proc, a race).
 */
export function portHolder(port: number): BusyPort['holder'] {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return undefined;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    if (Number(pid) === process.pid) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode && inodes.has(inode)) return { pid: Number(pid), command: commandLine(pid) };
    }
  }
  return undefined;
}

/** Inodes of sockets in LISTEN state (0A) on `port`, from /proc/net/tcp and /proc/net/tcp6. */
export function listeningInodes(port: number, files = ['/proc/net/tcp', '/proc/net/tcp6']): Set<string> {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const local = fields[1]!;
      if (fields[3] !== '0A' || local.slice(local.lastIndexOf(':') + 1) !== hexPort) continue;
      if (fields[9] !== '0') inodes.add(fields[9]!);
    }
  }
  return inodes;
}

function commandLine(pid: string): string {
  try {
    const words = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const text = words.join(' ');
    return text.length > 120 ? text.slice(0, 117) + '...' : text || '?';
  } catch {
    return '?';
  }
}
