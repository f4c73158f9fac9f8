// Background work that repeats: each run starts `intervalMs` after the previous one ended (runs
// never overlap), the timer does not keep the process alive, and stop() waits for a run in
// progress.

export class Periodic {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;

  constructor(
    private readonly intervalMs: number,
    private readonly task: () => Promise<unknown>,
  ) {}

  start(): void {
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.task().then(() => {
        this.running = undefined;
        this.schedule();
      });
    }, this.intervalMs);
    this.timer.unref();
  }
}
