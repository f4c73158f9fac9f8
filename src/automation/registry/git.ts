// The git CLI, run without a shell. Commands get a fixed identity and never prompt, so a
// missing credential fails fast instead of hanging a request.

import { execFile, spawn } from 'node:child_process';
import { CodedError } from '../../core/errors.js';

export class GitError extends CodedError {
  constructor(
    readonly args: readonly string[],
    readonly stderr: string,
    readonly exitCode: number | null,
  ) {
    super(
      'git_failed',
      `git ${args.join(' ')} failed (${exitCode ?? 'signal'}): ${stderr.trim().split('\n').slice(-3).join(' ')}`,
    );
  }
}

const GIT_ENV = {
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'sluice',
  GIT_AUTHOR_EMAIL: 'sluice@localhost',
  GIT_COMMITTER_NAME: 'sluice',
  GIT_COMMITTER_EMAIL: 'sluice@localhost',
};

export function git(cwd: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      { cwd, env: { ...process.env, ...GIT_ENV }, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (err) {
          const code =
            typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : null;
          reject(new GitError(args, stderr || err.message, code));
        } else resolve(stdout);
      },
    );
  });
}

/** `git archive <commit> <path>` unpacked into `dest` (which must exist) through tar. */
export function archiveInto(repo: string, commit: string, path: string, dest: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const args = ['archive', '--format=tar', commit, path];
    const archive = spawn('git', args, {
      cwd: repo,
      env: { ...process.env, ...GIT_ENV },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tar = spawn('tar', ['-x', '-C', dest], { stdio: ['pipe', 'ignore', 'pipe'] });
    let errText = '';
    archive.stderr.on('data', (d: Buffer) => (errText += d.toString()));
    tar.stderr.on('data', (d: Buffer) => (errText += d.toString()));
    archive.stdout.pipe(tar.stdin);
    let pending = 2;
    let failed = false;
    const onExit = (name: string) => (code: number | null) => {
      if (code !== 0 && !failed) {
        failed = true;
        reject(new GitError(name === 'git' ? args : ['(tar)', ...args], errText, code));
      }
      if (--pending === 0 && !failed) resolve();
    };
    archive.on('error', reject);
    tar.on('error', reject);
    archive.on('close', onExit('git'));
    tar.on('close', onExit('tar'));
  });
}
