// The layer rule of docs/architecture.md: src/core is shared by every service and imports no
// service code. Its one door to the services is src/services.ts, the table that loads each service
// lazily (only the threads that run a service import it). Every import and `export … from` of every
// file under src/core is resolved and checked against that rule.
import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { it } from 'node:test';

const ROOT = resolve(import.meta.dirname, '../..');
const CORE = join(ROOT, 'src', 'core');
const SERVICES_TABLE = join(ROOT, 'src', 'services.js');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Relative specifiers of static imports, `export … from` and dynamic `import('…')`. */
function relativeSpecifiers(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)'(\.{1,2}\/[^']+)'/gm))
    found.push(match[1]!);
  return found;
}

it('src/core imports no service code (only the lazy service table, src/services.ts)', () => {
  const files = sources(CORE);
  assert.ok(files.length > 50, 'src/core was read');
  const crossings: string[] = [];
  for (const file of files) {
    for (const specifier of relativeSpecifiers(readFileSync(file, 'utf8'))) {
      const target = resolve(dirname(file), specifier);
      if (target.startsWith(CORE + '/') || target === SERVICES_TABLE) continue;
      crossings.push(`${relative(ROOT, file)} imports ${specifier}`);
    }
  }
  assert.deepEqual(crossings, []);
});

it('the check sees a crossing: a core file importing a service is reported', () => {
  const text = "import { x } from '../../automation/settings.js';\nexport { y } from './local.js';\n";
  assert.deepEqual(relativeSpecifiers(text), ['../../automation/settings.js', './local.js']);
  const target = resolve(join(CORE, 'backup'), '../../automation/settings.js');
  assert.ok(!target.startsWith(CORE + '/'));
});
