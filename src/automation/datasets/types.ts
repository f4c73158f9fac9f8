// Dataset example records as stored, and the public view (the SDK's DatasetExample) derived from them.

import type { AutomationType } from '../registry/manifest.js';
import type { DatasetExample } from '../wire/datasets.js';

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
  /** Dataset order; null (cleared) sorts after every numbered example. */
  rowOrder: number | null;
  overrides: Record<string, unknown> | null;
  latestRunId: string | null;
  createdAt: string;
  updatedAt: string;
  /** Folder → path inside the folder → blob. */
  files: Record<ExampleFolder, Record<string, ExampleFileRef>>;
}

/** Dataset order: rowOrder (null last), then id. */
export function byDatasetOrder(a: ExampleRecord, b: ExampleRecord): number {
  const ra = a.rowOrder ?? Number.POSITIVE_INFINITY;
  const rb = b.rowOrder ?? Number.POSITIVE_INFINITY;
  if (ra !== rb) return ra < rb ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The SDK's DatasetExample: exactly its fields (the input file paths are listed by their own route). */
export function exampleView(e: ExampleRecord): DatasetExample {
  const base = `/api/v1/automations/${encodeURIComponent(e.automationId)}/examples/${encodeURIComponent(e.id)}`;
  return {
    id: e.id,
    name: e.name,
    automationId: e.automationId,
    automationType: e.automationType,
    input: (e.input ?? null) as Record<string, unknown> | null,
    expected: e.expected ?? null,
    expectedFiles: Object.keys(e.files.expected)
      .sort()
      .map((name) => ({
        name,
        url: `${base}/expected/${name.split('/').map(encodeURIComponent).join('/')}`,
      })),
    metadata: e.metadata,
    annotation: e.annotation,
    rowOrder: e.rowOrder,
    overrides: e.overrides,
    latestRunId: e.latestRunId,
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
  };
}
