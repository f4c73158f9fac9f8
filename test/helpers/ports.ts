// Ports for servers that tests start on a port chosen in advance (sluice itself, redis-server,
// nats-server, postgres, memcached).
//
// Asking the kernel for a free port (listen on 0) hands out a port from the ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range, 32768–60999 on Debian). Between that answer and the
// server's own bind, any other process's outgoing connection or listen(0) may take the same port,
// and on a busy CI machine with two test files running at once that happened (EADDRINUSE, or
// grpc-js's "No address added"). So ports here come from below the ephemeral range, where the
// kernel never hands out ports on its own, and each test process takes a block of them for
// itself: a block is owned through a lock file (created with O_EXCL) that names the owner's pid,
// so two running test processes never draw from the same block. A block whose owner has exited
// is taken over. Every port is still bound once before it is handed out, so one held by a
// daemon (or by a server this process started earlier and has not closed) is skipped.
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BLOCK_SIZE = 200;
// Below this, guides run by the doc test bind fixed ports (16xxx, 18xxx in docs/deployment.md);
// the blocks start above them, so a test's port never meets a guide's.
const LOWEST = 20_000;

interface Block {
  first: number;
  next: number;
}

let block: Block | undefined | null;

/** The ports below the kernel's ephemeral range that blocks are cut from. */
function usableRange(): { first: number; end: number } {
  let ephemeralStart = 32_768;
  try {
    const [start] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    if (Number(start) > 0) ephemeralStart = Number(start);
  } catch {
    // Not Linux: keep the IANA default start of the dynamic range's Linux counterpart.
  }
  return { first: LOWEST, end: ephemeralStart };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes a block for this process, or null when none is free (the kernel's choice is used then). */
function claimBlock(): Block | null {
  const { first, end } = usableRange();
  const count = Math.floor((end - first) / BLOCK_SIZE);
  if (count <= 0) return null;
  const dir = join(tmpdir(), `sluice-test-ports-${process.getuid?.() ?? 0}`);
  mkdirSync(dir, { recursive: true });
  // Start the search at a place that depends on the pid, so concurrent processes rarely race for
  // the same lock file.
  const start = process.pid % count;
  for (let i = 0; i < count; i++) {
    const index = (start + i) % count;
    const lock = join(dir, String(index));
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        writeFileSync(lock, String(process.pid), { flag: 'wx' });
        process.once('exit', () => {
          try {
            if (readFileSync(lock, 'utf8') === String(process.pid)) unlinkSync(lock);
          } catch {
            // Already gone.
          }
        });
        const firstPort = first + index * BLOCK_SIZE;
        return { first: firstPort, next: firstPort };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      let owner = 0;
      try {
        owner = Number(readFileSync(lock, 'utf8'));
      } catch {
        continue; // removed meanwhile: try to create it again
      }
      if (owner > 0 && alive(owner)) break;
      try {
        unlinkSync(lock); // its owner has exited
      } catch {
        // Another process removed it first.
      }
    }
  }
  return null;
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port the kernel chose (the fallback when no block is free). */
function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * `count` consecutive ports of this process's block, each bound once to check it is free.
 * Ports are handed out in order and the block is walked again from its start when used up, by
 * which time a test has long closed the servers it started on the first ones.
 */
async function takeRun(count: number): Promise<number> {
  if (block === undefined) block = claimBlock();
  if (block === null) {
    if (count === 1) return kernelPort();
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = await kernelPort();
      if (port + count - 1 <= 65_535 && (await canBind(port + 1))) return port;
    }
    throw new Error('no consecutive free ports found');
  }
  for (let tries = 0; tries < BLOCK_SIZE; tries++) {
    if (block.next + count > block.first + BLOCK_SIZE) block.next = block.first;
    const port = block.next;
    block.next += count;
    let free = true;
    for (let k = 0; k < count && free; k++) free = await canBind(port + k);
    if (free) return port;
  }
  throw new Error(
    `no ${count} free consecutive ports in this test process's block ${block.first}–${block.first + BLOCK_SIZE - 1}`,
  );
}

/** A free TCP port on 127.0.0.1 (for servers that cannot bind port 0 themselves). */
export function freePort(): Promise<number> {
  return takeRun(1);
}

/** A free port whose successor is free too (for per-thread consecutive ports). */
export function freePortPair(): Promise<number> {
  return takeRun(2);
}
