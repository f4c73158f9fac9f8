// Which run files go upload-first. The product SDK keeps a run start's multipart body under a
// configured size (4.5 MiB by default, a serverless body ceiling) by uploading the largest files
// first through the Files API and sending `{ "$fileId": ... }` in their place; the rest stay
// in the one multipart request.

/** Room kept for the multipart boundaries and the target/input/overrides/metadata parts. */
export const MULTIPART_HEADROOM_BYTES = 256 * 1024;

export interface SizedFile {
  /** Anything that names the file uniquely (the multipart part name). */
  key: string;
  size: number;
}

/**
 * The keys of the files to upload first so that the remaining file bytes plus the headroom fit
 * in `maxBytes`. A file that alone exceeds the budget always goes first; then the largest
 * remaining files go until the rest fits (ties by key, so the choice is deterministic). `null`
 * means no limit.
 */
export function filesToUploadFirst(files: readonly SizedFile[], maxBytes: number | null): Set<string> {
  const chosen = new Set<string>();
  if (maxBytes === null) return chosen;
  const budget = Math.max(0, maxBytes - MULTIPART_HEADROOM_BYTES);
  let inline = 0;
  for (const file of files) {
    if (file.size > budget) chosen.add(file.key);
    else inline += file.size;
  }
  const rest = files
    .filter((file) => !chosen.has(file.key))
    .sort((a, b) => b.size - a.size || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (const file of rest) {
    if (inline <= budget) break;
    chosen.add(file.key);
    inline -= file.size;
  }
  return chosen;
}
