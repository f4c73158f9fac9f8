// Out of the box: with RUNTIME_ROOT unset the service reads `<dataDir>/ratelimit/runtime/current`
// and, the first time that folder is missing, writes a commented example there. It is then the
// user's file: it is never rewritten, and edits reload at once.

import { existsSync, linkSync, mkdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const EXAMPLE_CONFIG = `# Sluice rate limit configuration (the Envoy rate limit service format).
# Every *.yaml file in this folder is loaded; edits are picked up while the service runs,
# and a file with an error is reported in the log while the previous rules stay in force.
# Reference: docs/ratelimit.md.
domain: example
descriptors:
  # 10 requests per second for each distinct remote_address value.
  - key: remote_address
    rate_limit:
      unit: second
      requests_per_unit: 10

  # A tighter limit for one path, and no limit at all for health checks.
  - key: path
    value: /login
    rate_limit:
      unit: minute
      requests_per_unit: 5
  - key: path
    value: /healthz
    rate_limit:
      unlimited: true

  # Nested: per user and per API route under /api/ (\`*\` matches any text).
  - key: user
    descriptors:
      - key: route
        value: /api/*
        rate_limit:
          unit: hour
          requests_per_unit: 1000
`;

export function defaultRuntimeRoot(dataDir: string): string {
  return join(dataDir, 'ratelimit', 'runtime', 'current');
}

/** Creates `<root>/<appDirectory>/example.yaml` when the folder does not exist yet. Safe to race. */
export function seedRuntime(root: string, appDirectory: string): boolean {
  const dir = join(root, appDirectory);
  if (existsSync(dir)) return false;
  mkdirSync(dir, { recursive: true });
  const target = join(dir, 'example.yaml');
  // Written aside and hard-linked in, so a thread listing the folder never reads half a file
  // and two threads seeding at once leave exactly one copy.
  const temp = join(root, `.example.yaml.${process.pid}.${Math.random().toString(36).slice(2)}`);
  writeFileSync(temp, EXAMPLE_CONFIG);
  try {
    linkSync(temp, target);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    unlinkSync(temp);
  }
}
