// Evaluator scoring as an experiment runs it: one parsed config, many runs. The ceiling for
// the in-thread suite is one JSON.stringify of the run output — every evaluator must at least
// look at the output once. The pool suite's ceiling is a trivial regex task through the
// worker pool: the fixed price of leaving the server thread, which custom scripts and user
// regexes pay by design.
import {
  parseEvaluatorConfig,
  scoreRun,
  ScriptPool,
  type EvaluatorConfig,
} from '../src/automation/evals/index.js';
import type { BenchFile } from './types.js';

const TYPICAL = `
passThreshold: 0.8
evaluators:
  - name: output-matches
    type: exact-diff
    weight: 2
    config: { numericTolerance: 0.001, allowExtraFields: true }
  - name: line-skus
    type: exact-diff
    config: { paths: ["lines[].sku", "invoice.id"] }
  - { name: has-total, type: contains, path: /summary, value: [Total, "120.50"] }
  - { name: id-format, type: regex, path: /invoice/id, value: "^INV-[0-9]{6}$" }
  - name: shape
    type: json-schema
    value: { type: object, required: [vendor, total, lines], properties: { total: { type: number }, lines: { type: array, items: { type: object, required: [sku, qty] } } } }
  - { name: vendor, type: equals, path: /vendor }
  - { name: summary-close, type: similar, path: /summary, threshold: 0.8 }
`;

const WITH_SCRIPT = `
evaluators:
  - { name: id-format, type: regex, path: /invoice/id, value: "^INV-[0-9]{6}$" }
  - name: business-rule
    type: custom-script
    value: |
      const sum = output.lines.reduce((n, l) => n + l.qty * l.price, 0);
      return { score: Math.abs(sum - output.total) < 0.01 ? 1 : 0, reason: 'line sum ' + sum };
`;

function parse(yaml: string): EvaluatorConfig {
  const r = parseEvaluatorConfig(yaml);
  if (!r.ok) throw new Error(`bench config invalid: ${JSON.stringify(r.errors)}`);
  return r.config;
}

function invoice(lines: number): Record<string, unknown> {
  const items = Array.from({ length: lines }, (_, i) => ({
    sku: `SKU-${i}`,
    qty: (i % 3) + 1,
    price: 10 + (i % 7),
  }));
  const total = items.reduce((n, l) => n + l.qty * l.price, 0);
  return {
    vendor: 'ACME Industrial Supplies',
    total,
    invoice: { id: 'INV-004211', date: '2026-11-25' },
    lines: items,
    summary: `Total due: 120.50 for ${lines} lines, payable within 30 days to ACME Industrial Supplies.`,
  };
}

const bench: BenchFile = () => {
  const typical = parse(TYPICAL);
  const withScript = parse(WITH_SCRIPT);
  const regexOnly = parse('evaluators:\n  - { name: r, type: regex, path: /v, value: "^x" }\n');
  const expected = invoice(20);
  const output = { ...invoice(20), summary: `${String(expected.summary)} Thank you.` };
  let pool: ScriptPool | undefined;
  // Results are accumulated so the engine cannot drop the work as dead code.
  const sink = { value: 0 };

  return [
    {
      name: 'evaluators: typical deterministic config',
      description:
        'scoreRun with 7 in-thread evaluators (exact-diff ×2, contains, regex, json-schema, equals, similar) on a 20-line invoice, vs one JSON.stringify of the output; plus parsing the YAML.',
      ceiling: 'JSON.stringify(output)',
      tasks: {
        'JSON.stringify(output)': () => {
          sink.value += JSON.stringify(output).length;
        },
        'scoreRun (7 evaluators)': async () => {
          const r = await scoreRun({ config: typical, output, expected });
          sink.value += r.score ?? 0;
        },
        'parseEvaluatorConfig (7 evaluators)': () => {
          sink.value += parse(TYPICAL).evaluators.length;
        },
      },
    },
    {
      name: 'evaluators: worker pool (custom script, user regex)',
      description:
        'Scoring that leaves the server thread: a trivial regex through the pool (ceiling) vs a config with a regex and a custom script (fresh vm context per script).',
      ceiling: 'pool round trip (trivial regex)',
      setup: () => {
        pool = new ScriptPool({ maxThreads: 1 });
      },
      teardown: async () => {
        await pool?.close();
      },
      tasks: {
        'pool round trip (trivial regex)': async () => {
          const r = await scoreRun({ config: regexOnly, output: { v: 'xyz' }, ...(pool ? { pool } : {}) });
          sink.value += r.score ?? 0;
        },
        'scoreRun (regex + custom script)': async () => {
          const r = await scoreRun({ config: withScript, output, expected, ...(pool ? { pool } : {}) });
          if (r.results.some((x) => x.error !== null)) throw new Error(JSON.stringify(r.results));
          sink.value += r.score ?? 0;
        },
      },
    },
  ];
};

export default bench;
