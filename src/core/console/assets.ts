// The console's built files (dist/console, made by scripts/build-console.js), held in memory with
// their content type, a strong ETag and a gzip copy. Only files found by listing that folder can
// be served: a request names an entry of this map, never a path on disk, so no request path can
// reach outside the folder (each listed path is also checked to resolve inside it).

import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export interface Asset {
  readonly body: Buffer;
  readonly gzip: Buffer | undefined;
  readonly type: string;
  readonly etag: string;
  /** Named by content hash: cacheable for good. */
  readonly immutable: boolean;
}

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

function typeOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return (dot >= 0 ? TYPES[name.slice(dot).toLowerCase()] : undefined) ?? 'application/octet-stream';
}

/** dist/console of this installation, found from src/ (tsx) or dist/src/ (built). */
export function defaultConsoleDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'dist', 'console');
    dir = dirname(dir);
  }
  return resolve('dist', 'console');
}

export class ConsoleAssets {
  private files = new Map<string, Asset>();
  private loadedFrom = -1;

  constructor(readonly dir: string = defaultConsoleDir()) {}

  /** The file for a request path below /console/ ('' is index.html); undefined when there is none. */
  get(name: string): Asset | undefined {
    this.refresh();
    return this.files.get(name === '' ? 'index.html' : name);
  }

  /** False when the console was never built here. */
  get built(): boolean {
    this.refresh();
    return this.files.has('index.html');
  }

  /** Reloads when index.html changed (a rebuild while the server runs names new files). */
  private refresh(): void {
    const index = join(this.dir, 'index.html');
    let mtime = 0;
    try {
      mtime = statSync(index).mtimeMs;
    } catch {
      mtime = 0;
    }
    if (mtime === this.loadedFrom) return;
    this.loadedFrom = mtime;
    this.files = mtime === 0 ? new Map() : this.load();
  }

  private load(): Map<string, Asset> {
    const root = resolve(this.dir);
    const files = new Map<string, Asset>();
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (entry.name.startsWith('.')) continue;
        const path = resolve(dir, entry.name);
        if (!path.startsWith(root + sep)) continue;
        if (entry.isDirectory()) walk(path);
        else if (entry.isFile()) {
          const body = readFileSync(path);
          const type = typeOf(entry.name);
          const compressible = /^(text\/|application\/json|image\/svg)/.test(type) && body.length > 512;
          files.set(relative(root, path).split(sep).join('/'), {
            body,
            gzip: compressible ? gzipSync(body, { level: 9 }) : undefined,
            type,
            etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
            immutable: /-[A-Z0-9]{8,}\.\w+$/.test(entry.name),
          });
        }
      }
    };
    walk(root);
    return files;
  }
}
