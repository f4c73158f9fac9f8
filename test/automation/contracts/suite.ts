// The frame every store contract shares: a describe block that opens the store under test once,
// closes it after the last case, and hands the cases a getter for it.

import { after, before, describe } from 'node:test';

export function contractSuite<T extends { close(): Promise<void> }>(
  title: string,
  make: () => Promise<T>,
  cases: (opened: () => T) => void,
): void {
  describe(title, () => {
    let opened: T | undefined;
    before(async () => {
      opened = await make();
    });
    after(async () => {
      await opened?.close();
    });
    cases(() => {
      if (!opened) throw new Error(`${title}: the store under test did not open`);
      return opened;
    });
  });
}
