// USE_PUSHSTATS=false: each flush writes the interval's statistics to standard output as plain
// statsd lines (the same text a statsd server would receive), so they can be read or piped on.

import type { StatsSink } from '../types.js';
import { DeltaTracker } from './samples.js';
import { statsdLine, type Tags } from './statsd-lines.js';

export class StdoutSink implements StatsSink {
  private readonly deltas = new DeltaTracker();

  constructor(
    private readonly extraTags: Tags,
    private readonly out: { write(text: string): unknown } = process.stdout,
  ) {}

  flush(counters: ReadonlyMap<string, number>): void {
    const samples = this.deltas.next(counters);
    if (samples.length === 0) return;
    const format = { tagged: false, mogrifiers: [], extraTags: this.extraTags };
    this.out.write(samples.map((s) => statsdLine(s, format) + '\n').join(''));
  }

  async close(): Promise<void> {}
}
