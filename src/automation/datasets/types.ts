// Dataset example records as stored, and the API view derived from them.

import type { AutomationType } from '../registry/manifest.js';

export type ExampleFolder = 'input' | 'expected';

export interface ExampleFileRef {
  sha256: string;
  size: number;
  contentType: string;
}

export interface ExampleRecord {
  id: string;
  /** The tenant of the key that created it; only that tenant's keys see it. */
  tenant: string;
  automationId: string;
  automationType: AutomationType;
  name: string;
  input: unknown;
  expected: unknown;
  metadata: Record<string, unknown> | null;
  annotation: string | null;
  rowOrder: number;
  overrides: Record<string, unknown> | null;
  latestRunId: string | null;
  createdAt: string;
  updatedAt: string;
  /** Folder → path inside the folder → blob. */
  files: Record<ExampleFolder, Record<string, ExampleFileRef>>;
}

export function exampleView(e: ExampleRecord): Record<string, unknown> {
  const base = `/api/v1/automations/${encodeURIComponent(e.automationId)}/examples/${encodeURIComponent(e.id)}`;
  return {
    id: e.id,
    name: e.name,
    automationId: e.automationId,
    automationType: e.automationType,
    input: e.input,
    expected: e.expected,
    expectedFiles: Object.keys(e.files.expected)
      .sort()
      .map((name) => ({
        name,
        url: `${base}/expected/${name.split('/').map(encodeURIComponent).join('/')}`,
      })),
    inputFiles: Object.keys(e.files.input).sort(),
    metadata: e.metadata,
    annotation: e.annotation,
    rowOrder: e.rowOrder,
    overrides: e.overrides,
    latestRunId: e.latestRunId,
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
  };
}
