// Facts about the running Node.js that decide how Sluice listens.

/**
 * Whether `net` listeners take `reusePort` (SO_REUSEPORT): Node 22.12+ and 23.1+, on the
 * platforms whose SO_REUSEPORT spreads connections among the sockets (net.Server.listen in the
 * Node documentation; elsewhere libuv refuses the flag, and Node 20 ignores it, so a second
 * listener on the port fails with EADDRINUSE).
 */
export function reusePortSupported(
  version: string = process.versions.node,
  platform: NodeJS.Platform = process.platform,
): boolean {
  if (!['linux', 'freebsd', 'sunos', 'aix'].includes(platform)) return false;
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12);
}
