// The evaluator config editor shows the server's validation messages beside the YAML lines they
// are about. The service appends the line to each message it can place (`… (line 4)`, see
// docs/evaluators.md "Validation errors"); YAML syntax errors also say `at line 3, column 5`.

export interface PlacedIssue {
  field: string;
  message: string;
  /** 1-based line in the YAML text, or null when the issue has no place in it. */
  line: number | null;
}

export function lineOf(message: string): number | null {
  const tail = /\(line (\d+)\)\s*$/.exec(message);
  const inner = tail ?? /\bat line (\d+)\b/.exec(message);
  if (!inner) return null;
  const n = Number(inner[1]);
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

export function placeIssues(issues: { field: string; message: string }[]): PlacedIssue[] {
  return issues.map((i) => ({ field: i.field, message: i.message, line: lineOf(i.message) }));
}

/** Issues grouped by line, for the editor's gutter. */
export function issuesByLine(issues: PlacedIssue[]): Map<number, PlacedIssue[]> {
  const byLine = new Map<number, PlacedIssue[]>();
  for (const issue of issues) {
    if (issue.line === null) continue;
    const list = byLine.get(issue.line) ?? [];
    list.push(issue);
    byLine.set(issue.line, list);
  }
  return byLine;
}
