// Finds the configuration files of FILE mode and reads them in sorted name order (upstream
// order is random; sorted is deterministic and one of the orders upstream could produce).

import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from './errors.js';
import { parseConfigFile, type YamlDomainConfig } from './parse.js';

export interface RuntimeLayout {
  root: string;
  subdirectory: string;
  appDirectory: string;
  ignoreDotFiles: boolean;
  /** Entry names relative to root/subdirectory (`config.basic.yaml`) when true, else to the app dir. */
  watchRoot: boolean;
}

export function configDirectory(layout: RuntimeLayout): string {
  // An empty subdirectory adds no path segment (upstream would load nothing: a quirk not copied).
  return layout.subdirectory === ''
    ? join(layout.root, layout.appDirectory)
    : join(layout.root, layout.subdirectory, layout.appDirectory);
}

export interface ConfigFile {
  /** The entry name used in error messages. */
  name: string;
  path: string;
}

const CONFIG_EXTENSION = /\.ya?ml$/;

/** Lists `*.yaml`/`*.yml` files under the config directory, recursively, sorted by entry name. */
export function listConfigFiles(layout: RuntimeLayout): ConfigFile[] {
  const dir = configDirectory(layout);
  const out: ConfigFile[] = [];
  const prefix = layout.watchRoot ? layout.appDirectory + '.' : '';
  const walk = (abs: string, rel: string[]): void => {
    let names: string[];
    try {
      names = readdirSync(abs);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' && rel.length === 0) return;
      throw error;
    }
    for (const name of names) {
      if (layout.ignoreDotFiles && name.startsWith('.')) continue;
      const path = join(abs, name);
      let stats;
      try {
        stats = statSync(path);
      } catch {
        continue; // dangling symlink or a file removed while listing
      }
      if (stats.isDirectory()) walk(path, [...rel, name]);
      else if (stats.isFile() && CONFIG_EXTENSION.test(name))
        out.push({ name: prefix + [...rel, name].join('.'), path });
    }
  };
  walk(dir, []);
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export function readConfigFiles(layout: RuntimeLayout): YamlDomainConfig[] {
  return listConfigFiles(layout).map((file) => {
    let text: string;
    try {
      text = readFileSync(file.path, 'utf8');
    } catch (error) {
      throw new ConfigError(file.name, `error loading config file: ${(error as Error).message}`);
    }
    return parseConfigFile(file.name, text);
  });
}
