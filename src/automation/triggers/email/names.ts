// File names of attachments as input files: a sender's name is untrusted text, so it is cut to
// its last path segment, stripped of control characters (NUL included) and bounded; what is
// still not a safe single segment becomes `attachment-<n>`. The run's admission checks every
// input file path again (runs/admission.ts) whatever this returns.

import { checkRelativePath } from '../../datasets/paths.js';

const MAX_NAME = 200;

function one(raw: string | undefined, n: number): string {
  const fallback = `attachment-${n}`;
  if (raw === undefined) return fallback;
  const base = (raw.split(/[\\/]/).pop() ?? '').replace(/[\u0000-\u001f\u007f]/g, '').trim();
  let name = base.length > MAX_NAME ? base.slice(base.length - MAX_NAME) : base;
  if (name === '.' || name === '..' || name === '') return fallback;
  if (checkRelativePath(name) !== undefined) name = fallback;
  return name;
}

/** One confined, distinct name per attachment, in order (`a.txt`, `a (2).txt` for a repeat). */
export function attachmentNames(raw: readonly (string | undefined)[]): string[] {
  const taken = new Set<string>();
  return raw.map((r, i) => {
    const name = one(r, i + 1);
    let candidate = name;
    for (let k = 2; taken.has(candidate.toLowerCase()); k++) {
      const dot = name.lastIndexOf('.');
      candidate = dot > 0 ? `${name.slice(0, dot)} (${k})${name.slice(dot)}` : `${name} (${k})`;
    }
    taken.add(candidate.toLowerCase());
    return candidate;
  });
}
