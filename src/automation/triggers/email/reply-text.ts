// What a reply says: the run's status, its error, its output as JSON text (bounded) and the
// link to the ZIP of its output files with a signed download token (docs/automation.md
// "Triggers"). A refused message's reply says why no run started.

import type { RunRecord } from '../../runs/types.js';

/** Output JSON beyond this many characters is cut (the full output stays in the run). */
const MAX_OUTPUT_CHARS = 64 * 1024;

export const replySubject = (subject: string) => (/^re:/i.test(subject) ? subject : `Re: ${subject}`);

export function runReplyText(
  run: RunRecord,
  zip: { url: string; expiresAt: string } | { missing: string } | undefined,
): string {
  const lines = [`Run ${run.id} of ${run.slug} ${run.version}: ${run.status}`];
  if (run.error) lines.push(`Error: ${run.error}`);
  let output = JSON.stringify(run.output ?? null, null, 2);
  if (output.length > MAX_OUTPUT_CHARS)
    output = `${output.slice(0, MAX_OUTPUT_CHARS)}\n… (cut at ${MAX_OUTPUT_CHARS} characters; the run holds all of it)`;
  lines.push('', 'Output:', output, '');
  if (zip === undefined) lines.push('The run wrote no output files.');
  else if ('missing' in zip) lines.push(`Output files: ${zip.missing}`);
  else lines.push(`Output files (ZIP, link valid until ${zip.expiresAt}):`, zip.url);
  return lines.join('\n') + '\n';
}

export function refusalText(
  automation: string,
  message: string,
  issues: readonly { field: string; message: string }[],
): string {
  const lines = [`Your message did not start a run of ${automation}: ${message}`];
  for (const i of issues) lines.push(`- ${i.field}: ${i.message}`);
  return lines.join('\n') + '\n';
}
