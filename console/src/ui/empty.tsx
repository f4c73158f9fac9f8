// An empty list says what to do next: the command to run or the button to press, never a
// header-only table.

import type { ComponentChildren } from 'preact';

export function Empty({ children }: { children: ComponentChildren }) {
  return (
    <p class="empty-state" role="status">
      {children}
    </p>
  );
}

/** The one row of an empty table, spanning its columns. */
export function EmptyRow({ cols, children }: { cols: number; children: ComponentChildren }) {
  return (
    <tr>
      <td colSpan={cols} class="empty">
        {children}
      </td>
    </tr>
  );
}
