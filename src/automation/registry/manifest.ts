// Package manifests (workflows/<slug>/manifest.{json,yaml}): parsed and validated in one
// place so sync and run start agree on what a valid automation is.

import { parse as parseYaml } from 'yaml';
import { parseDuration } from '../../core/settings/index.js';
import { CodedError } from '../../core/errors.js';
import { schemaProblem } from '../schemas/compiler.js';
import { parseCronTrigger, type CronTrigger } from '../triggers/cron/trigger.js';
import { emailTrigger } from '../triggers/email/manifest-field.js';

export type AutomationType = 'workflow' | 'agent';

export interface Triggers {
  api: boolean;
  manual: boolean;
  email: { enabled: boolean; aliases: string[] };
  /** A schedule (src/automation/triggers/cron/trigger.ts); null: none. */
  cron: CronTrigger | null;
}

export interface Manifest {
  schemaVersion: number;
  name: string;
  description: string;
  type: AutomationType;
  entry: string;
  timeoutMs: number;
  inputSchema: Record<string, unknown> | null;
  outputSchema: Record<string, unknown> | null;
  triggers: Triggers;
  model: string | null;
  /** The manifest as written, passed to the runtime (agents read model, tools, systemPrompt). */
  raw: Record<string, unknown>;
}

export interface ManifestIssue {
  field: string;
  message: string;
}

export class ManifestError extends CodedError {
  constructor(readonly issues: ManifestIssue[]) {
    super(
      'invalid_manifest',
      `invalid manifest: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`,
    );
  }
}

export const MANIFEST_NAMES = ['manifest.json', 'manifest.yaml', 'manifest.yml'] as const;

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function parseManifest(
  text: string,
  fileName: string,
  expectedType: AutomationType,
  defaultTimeoutMs: number,
): Manifest {
  let doc: unknown;
  try {
    doc = fileName.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new ManifestError([
      { field: '<root>', message: `${fileName} does not parse: ${(err as Error).message}` },
    ]);
  }
  if (!isObject(doc))
    throw new ManifestError([{ field: '<root>', message: `${fileName} must be an object` }]);
  const issues: ManifestIssue[] = [];
  const str = (key: string, required: boolean): string => {
    const v = doc[key];
    if (v === undefined || v === null) {
      if (required) issues.push({ field: key, message: 'is required' });
      return '';
    }
    if (typeof v !== 'string' || (required && v.trim() === '')) {
      issues.push({ field: key, message: 'must be a non-empty string' });
      return '';
    }
    return v;
  };
  const name = str('name', true);
  const description = str('description', false);
  const type = doc['type'] ?? expectedType;
  if (type !== expectedType)
    issues.push({
      field: 'type',
      message: `must be "${expectedType}" for a package under ${expectedType}s/`,
    });
  const entry = str('entry', expectedType === 'workflow');
  if (entry && (entry.startsWith('/') || entry.split('/').includes('..'))) {
    issues.push({ field: 'entry', message: 'must be a path inside the package' });
  }
  const schemaVersion = doc['schemaVersion'] ?? 1;
  if (schemaVersion !== 1) issues.push({ field: 'schemaVersion', message: 'must be 1' });

  let timeoutMs = defaultTimeoutMs;
  const timeout = doc['timeout'] ?? doc['timeoutMs'];
  if (typeof timeout === 'number' && Number.isFinite(timeout) && timeout > 0) timeoutMs = timeout;
  else if (typeof timeout === 'string') {
    const ms = parseDuration(timeout);
    if (ms === undefined || ms <= 0)
      issues.push({ field: 'timeout', message: 'must be a duration such as 30s or 5m' });
    else timeoutMs = ms;
  } else if (timeout !== undefined)
    issues.push({ field: 'timeout', message: 'must be a duration string or milliseconds' });

  const schema = (key: string): Record<string, unknown> | null => {
    const v = doc[key];
    if (v === undefined || v === null) return null;
    if (!isObject(v)) {
      issues.push({ field: key, message: 'must be a JSON Schema object' });
      return null;
    }
    // The compiler run inputs and outputs are later validated with (same dialect, cached).
    const problem = schemaProblem(v);
    if (problem !== null) issues.push({ field: key, message: `is not a valid JSON Schema: ${problem}` });
    return v;
  };
  const inputSchema = schema('inputSchema');
  const outputSchema = schema('outputSchema');

  const t = doc['triggers'];
  const triggers: Triggers = { api: true, manual: true, email: { enabled: false, aliases: [] }, cron: null };
  if (t !== undefined && !isObject(t)) issues.push({ field: 'triggers', message: 'must be an object' });
  if (isObject(t)) {
    if (t['api'] !== undefined) triggers.api = t['api'] !== false;
    if (t['manual'] !== undefined) triggers.manual = t['manual'] !== false;
    if (t['email'] !== undefined) triggers.email = emailTrigger(t['email'], issues);
    triggers.cron = parseCronTrigger(t['cron'], issues);
  }
  let model: string | null = null;
  if (expectedType === 'agent') {
    model = typeof doc['model'] === 'string' ? doc['model'] : 'builtin:echo';
    if (
      doc['tools'] !== undefined &&
      !(Array.isArray(doc['tools']) && doc['tools'].every((x) => typeof x === 'string'))
    ) {
      issues.push({ field: 'tools', message: 'must be a list of tool names' });
    }
  }
  if (issues.length > 0) throw new ManifestError(issues);
  return {
    schemaVersion: 1,
    name,
    description,
    type: expectedType,
    entry,
    timeoutMs,
    inputSchema,
    outputSchema,
    triggers,
    model,
    raw: doc,
  };
}
