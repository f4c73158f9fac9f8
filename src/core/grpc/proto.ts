// Loads the project's .proto files at run time with protobufjs. The files live in the
// repository's proto/ folder, which tsc does not copy into dist/, so the folder is found by
// walking up from this module: that works from src/ under tsx and from dist/src/ after a build.

import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

export type ProtoRoot = protobuf.Root;
export type ProtoType = protobuf.Type;
export type ProtoService = protobuf.Service;

// A file every checkout has; its presence identifies the right proto/ folder.
const SENTINEL = join('envoy', 'service', 'ratelimit', 'v3', 'rls.proto');

let cachedDir: string | undefined;

/** Absolute path of the repository's proto/ folder. */
export function protoDir(): string {
  if (cachedDir) return cachedDir;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'proto');
    if (existsSync(join(candidate, SENTINEL))) return (cachedDir = candidate);
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`proto/ folder not found above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

/** Well-known files for the protocols Sluice speaks, relative to proto/. */
export const PROTO_FILES = {
  rls: 'envoy/service/ratelimit/v3/rls.proto',
  rlsConfig: 'ratelimit/config/ratelimit/v3/rls_conf.proto',
  rlsConfigDiscovery: 'ratelimit/service/ratelimit/v3/rls_conf_ds.proto',
  ads: 'envoy/service/discovery/v3/ads.proto',
  discovery: 'envoy/service/discovery/v3/discovery.proto',
  health: 'grpc/health/v1/health.proto',
} as const;

const roots = new Map<string, ProtoRoot>();

/**
 * Parses the given files (paths relative to proto/, or absolute) and their imports into one
 * root. Imports resolve against proto/; google/protobuf/* comes from protobufjs's bundled copies.
 * Field names become lowerCamelCase, which is also the proto3 JSON mapping. Roots are cached per
 * file list because parsing costs milliseconds and services ask for the same files repeatedly.
 */
export function loadProto(files: readonly string[]): ProtoRoot {
  const key = [...files].sort().join('\n');
  const cached = roots.get(key);
  if (cached) return cached;
  const base = protoDir();
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (isAbsolute(target) ? target : join(base, target));
  root.loadSync(
    files.map((f) => (isAbsolute(f) ? f : join(base, f))),
    { keepCase: false },
  );
  root.resolveAll();
  roots.set(key, root);
  return root;
}

export function lookupType(root: ProtoRoot, fullName: string): ProtoType {
  return root.lookupType(fullName);
}

export function lookupService(root: ProtoRoot, fullName: string): ProtoService {
  return root.lookupService(fullName);
}
