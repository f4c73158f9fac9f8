// The console never turns a string into HTML: the lint rule (eslint.config.js CONSOLE_NO_HTML)
// refuses each way of doing it in console/, and the console's sources hold none of them.
import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { ESLint } from 'eslint';

const FILE = 'console/src/ui/error-box.tsx';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

describe('console renders text, never HTML', () => {
  let eslint: ESLint;
  before(() => {
    eslint = new ESLint();
  });

  for (const [what, code] of [
    ['dangerouslySetInnerHTML', 'export const X = () => <div dangerouslySetInnerHTML={{ __html: "x" }} />;'],
    ['innerHTML', 'export function f(e: HTMLElement, s: string) { e.innerHTML = s; }'],
    ['outerHTML', 'export function f(e: HTMLElement, s: string) { e.outerHTML = s; }'],
    [
      'insertAdjacentHTML',
      'export function f(e: HTMLElement, s: string) { e.insertAdjacentHTML("beforeend", s); }',
    ],
    ['document.write', 'export function f(s: string) { document.write(s); }'],
    ['DOMParser', 'export const d = new DOMParser();'],
  ] as const) {
    it(`the lint rule refuses ${what}`, async () => {
      const [result] = await eslint.lintText(code, { filePath: FILE });
      const hits = result!.messages.filter((m) => m.ruleId === 'no-restricted-syntax');
      assert.equal(hits.length, 1, JSON.stringify(result!.messages));
    });
  }

  it('no console source uses any of them', () => {
    for (const file of sources('console/src')) {
      const text = readFileSync(file, 'utf8');
      assert.doesNotMatch(
        text,
        /dangerouslySetInnerHTML|\.innerHTML\b|\.outerHTML\b|insertAdjacentHTML|document\.write|DOMParser/,
        file,
      );
    }
  });
});
