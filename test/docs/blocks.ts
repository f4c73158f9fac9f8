// Reads the fenced code blocks of a Markdown page the way the doc test runs them (the convention
// is described in docs/architecture.md, "Docs that run").
//
// - A block fenced as ```sh, ```bash or ```shell is runnable.
// - `<!-- doc-test: skip (reason) -->` on the lines just before a shell block opts it out; the
//   reason is required.
// - `<!-- doc-test: expect -->` before a block (```json or ```text) makes it the expected standard
//   output of the last runnable shell block above it on the page.
// - `<!-- doc-test: file <path> -->` before a block says the block is that repository file,
//   verbatim (a built-in example quoted in full).
// - `<!-- doc-test: instead NAME=postgres -->` before a shell block that sets NAME to a
//   reader's own PostgreSQL URL: the test sets NAME to a database of a private PostgreSQL server
//   it starts for the page instead of running the block.

export type ShellBlock = {
  kind: 'shell';
  line: number;
  code: string;
  skip: string | undefined;
  expect: Expectation | undefined;
  /** Run `<name>=<the service's URL>` instead of the block. */
  instead?: Substitute;
};

/** The services a page can ask the test for, in place of a reader's own. */
export type Substitute = { name: string; service: 'postgres' };

export type Expectation = { line: number; lang: string; text: string };

export type QuotedFile = { line: number; path: string; text: string };

export class DocFormatError extends Error {}

const SHELL = new Set(['sh', 'bash', 'shell']);
const DIRECTIVE = /^<!--\s*doc-test:\s*(.*?)\s*-->$/;

/** The shell blocks of one page, in order, with their skip reasons and expected outputs. */
export function shellBlocks(markdown: string, page: string): ShellBlock[] {
  return readPage(markdown, page).shell;
}

/** The blocks of one page that quote a repository file. */
export function quotedFiles(markdown: string, page: string): QuotedFile[] {
  return readPage(markdown, page).files;
}

function readPage(markdown: string, page: string): { shell: ShellBlock[]; files: QuotedFile[] } {
  const lines = markdown.split('\n');
  const out: ShellBlock[] = [];
  const files: QuotedFile[] = [];
  let directive: { text: string; line: number } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] as string;
    const trimmed = raw.trim();
    const comment = DIRECTIVE.exec(trimmed);
    if (comment) {
      directive = { text: comment[1] as string, line: i + 1 };
      continue;
    }
    const open = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)(.*)$/.exec(raw);
    if (!open) {
      // Only blank lines may stand between a directive and its block.
      if (trimmed !== '' && directive) {
        throw new DocFormatError(
          `${page}:${directive.line}: "doc-test: ${directive.text}" is not followed by a code block`,
        );
      }
      continue;
    }
    const indent = (open[1] as string).length;
    const fence = open[2] as string;
    const lang = (open[3] as string).toLowerCase();
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const line = lines[j] as string;
      const close = line.trim();
      if (close.startsWith(fence) && /^[`~]+$/.test(close) && close[0] === fence[0]) break;
      body.push(line.slice(Math.min(indent, line.length - line.trimStart().length)));
    }
    if (j >= lines.length) throw new DocFormatError(`${page}:${i + 1}: code block is never closed`);
    const code = body.join('\n');
    const here = directive;
    directive = undefined;
    if (SHELL.has(lang)) {
      let skip: string | undefined;
      const instead = here ? /^instead\s+([A-Za-z_][A-Za-z0-9_]*)=postgres$/.exec(here.text) : null;
      if (instead) {
        const substitute: Substitute = { name: instead[1] as string, service: 'postgres' };
        out.push({
          kind: 'shell',
          line: i + 1,
          code,
          skip: undefined,
          expect: undefined,
          instead: substitute,
        });
        i = j;
        continue;
      }
      if (here) {
        const m = /^skip\s*[(:]\s*(.*?)\)?$/.exec(here.text);
        if (!m || (m[1] as string).trim() === '') {
          throw new DocFormatError(
            `${page}:${here.line}: a shell block takes only "doc-test: skip (reason)", with a reason, or "doc-test: instead NAME=postgres"; got "${here.text}"`,
          );
        }
        skip = (m[1] as string).trim();
      }
      out.push({ kind: 'shell', line: i + 1, code, skip, expect: undefined });
    } else if (here && here.text.startsWith('file ')) {
      files.push({ line: i + 1, path: here.text.slice('file '.length).trim(), text: code });
    } else if (here) {
      if (here.text !== 'expect') {
        throw new DocFormatError(
          `${page}:${here.line}: unknown directive "doc-test: ${here.text}" before a ${lang} block`,
        );
      }
      const previous = out[out.length - 1];
      if (!previous || previous.skip !== undefined) {
        throw new DocFormatError(
          `${page}:${here.line}: an expected output needs a runnable shell block above it`,
        );
      }
      if (previous.expect) {
        throw new DocFormatError(
          `${page}:${here.line}: the shell block at line ${previous.line} already has an expected output`,
        );
      }
      previous.expect = { line: i + 1, lang, text: code };
    }
    i = j;
  }
  if (directive)
    throw new DocFormatError(
      `${page}:${directive.line}: "doc-test: ${directive.text}" is not followed by a code block`,
    );
  return { shell: out, files };
}
