// Where configuration comes from. FILE mode is here; the management-server (xDS) provider
// (config/xds.ts) implements the same interface and hands over the same documents.

import { watch, realpathSync, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { YamlDomainConfig } from './parse.js';
import { configDirectory, readConfigFiles, type RuntimeLayout } from './files.js';

export type ConfigEvent = { ok: true; documents: YamlDomainConfig[] } | { ok: false; error: Error };

export interface ConfigProvider {
  /** Delivers the first event before resolving, then one event per reload until closed. */
  start(listener: (event: ConfigEvent) => void): Promise<void>;
  /** Forces a reload (tests, the debug server). */
  reload(): void;
  close(): Promise<void>;
}

export interface FileProviderOptions extends RuntimeLayout {
  /** Coalesces bursts of file events (an editor's save is several). */
  debounceMs?: number;
}

/**
 * Reads all files on start and on every change. With watchRoot the parent of RUNTIME_ROOT is
 * watched and a reload happens when the root's resolved path changes (a symlink swap);
 * otherwise the config directory itself is watched (write, create, chmod, remove).
 */
export class FileConfigProvider implements ConfigProvider {
  private listener: ((event: ConfigEvent) => void) | undefined;
  private watchers: FSWatcher[] = [];
  private timer: NodeJS.Timeout | undefined;
  private rootTarget: string | undefined;
  private rearmTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: FileProviderOptions) {}

  async start(listener: (event: ConfigEvent) => void): Promise<void> {
    this.listener = listener;
    this.rootTarget = this.resolveRoot();
    this.arm();
    this.load();
  }

  reload(): void {
    this.load();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.rearmTimer) clearTimeout(this.rearmTimer);
    for (const w of this.watchers) w.close();
    this.watchers = [];
  }

  private load(): void {
    if (this.closed || !this.listener) return;
    let event: ConfigEvent;
    try {
      event = { ok: true, documents: readConfigFiles(this.options) };
    } catch (error) {
      event = { ok: false, error: error as Error };
    }
    this.listener(event);
  }

  private schedule(): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.load();
    }, this.options.debounceMs ?? 50);
    this.timer.unref?.();
  }

  private resolveRoot(): string | undefined {
    try {
      return realpathSync(this.options.root);
    } catch {
      return undefined;
    }
  }

  private arm(): void {
    for (const w of this.watchers) w.close();
    this.watchers = [];
    if (this.closed) return;
    if (this.options.watchRoot) {
      const parent = dirname(this.options.root);
      const name = basename(this.options.root);
      this.add(parent, (file) => {
        if (file !== null && file !== name) return;
        const target = this.resolveRoot();
        if (target !== this.rootTarget) {
          this.rootTarget = target;
          this.schedule();
        }
      });
    } else {
      this.add(configDirectory(this.options), () => this.schedule());
    }
  }

  private add(dir: string, onEvent: (file: string | null) => void): void {
    try {
      const watcher = watch(dir, { persistent: false }, (_event, file) =>
        onEvent(file === null ? null : String(file)),
      );
      // The watched directory itself was removed or replaced: watch again once it is back.
      watcher.on('error', () => this.rearmLater());
      watcher.on('close', () => undefined);
      this.watchers.push(watcher);
    } catch {
      this.rearmLater();
    }
  }

  private rearmLater(): void {
    if (this.closed || this.rearmTimer) return;
    this.rearmTimer = setTimeout(() => {
      this.rearmTimer = undefined;
      this.arm();
      this.schedule();
    }, 500);
    this.rearmTimer.unref?.();
  }
}
