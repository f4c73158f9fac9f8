// The automation registry repository in a backup: a bare mirror made by `git clone --mirror
// --no-local`. Going through git's pack protocol (not a file copy) means the copy holds exactly
// the objects reachable from the refs git read when the clone began, packed afresh: a pack or a
// ref that the server (or a push) is writing at that moment cannot be copied half-written.
// Restore turns the mirror back into the non-bare repository the service opens.

import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { git } from '../automation/registry/git.js';

export interface RegistryCopy {
  /** Refs (branches, tags, others) in the copy. */
  refs: number;
  /** The commit HEAD names. */
  head: string;
  /** The repository's `origin` remote (AUTOMATION_REGISTRY_URL's clone), if it had one. */
  origin: string | null;
}

export function isRegistry(path: string): boolean {
  return existsSync(join(path, '.git'));
}

/** Mirrors the repository at `from` into `to` (which must not exist). */
export async function backupRegistry(from: string, to: string): Promise<RegistryCopy> {
  await git(from, ['clone', '--quiet', '--mirror', '--no-local', from, to]);
  // The mirror's own origin is the live repository; what matters on restore is the live
  // repository's origin (the remote it was cloned from), kept in the manifest.
  await git(to, ['remote', 'remove', 'origin']);
  let origin: string | null = null;
  try {
    origin = (await git(from, ['remote', 'get-url', 'origin'])).trim() || null;
  } catch {
    origin = null;
  }
  return { ...(await describe(to)), origin };
}

async function describe(repo: string): Promise<Omit<RegistryCopy, 'origin'>> {
  const refs = (await git(repo, ['for-each-ref', '--format=%(refname)'])).split('\n').filter(Boolean);
  const head = (await git(repo, ['rev-parse', 'HEAD^{commit}'])).trim();
  return { refs: refs.length, head };
}

/** Checks a mirror in a backup: HEAD resolves, every object is there, refs as recorded. */
export async function verifyRegistry(mirror: string, expected: RegistryCopy): Promise<void> {
  await git(mirror, ['fsck', '--no-dangling', '--no-progress']);
  const found = await describe(mirror);
  if (found.refs !== expected.refs || found.head !== expected.head)
    throw new Error(
      `the registry copy has ${found.refs} refs at ${found.head}, the manifest says ${expected.refs} at ${expected.head}`,
    );
}

/** Recreates the non-bare repository at `to` (missing or empty) from the mirror `from`. */
export async function restoreRegistry(from: string, to: string, copy: RegistryCopy): Promise<void> {
  await mkdir(to, { recursive: true });
  const gitDir = join(to, '.git');
  await git(to, ['clone', '--quiet', '--mirror', '--no-local', from, gitDir]);
  await git(to, ['config', 'core.bare', 'false']);
  await git(to, ['remote', 'remove', 'origin']);
  if (copy.origin) await git(to, ['remote', 'add', 'origin', copy.origin]);
  // The working tree and index as at HEAD (the service reads commits, not the working tree).
  await git(to, ['reset', '--quiet', '--hard', 'HEAD']);
}
