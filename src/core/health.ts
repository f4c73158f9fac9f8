// A registry of health components. The process is healthy only when every registered component
// is; services register theirs (cache store, configuration, termination signal …). Details are
// facts about how the thread serves that do not change health, such as the HTTP transport
// (`http`: { transport: "uws" | "node", build, version }), set by the front-end thread.

export interface HealthSnapshot {
  healthy: boolean;
  components: Record<string, boolean>;
  details: Record<string, unknown>;
}

export class HealthRegistry {
  private readonly components = new Map<string, boolean>();
  private readonly listeners = new Set<(healthy: boolean) => void>();
  private readonly details = new Map<string, unknown>();

  detail(name: string, value: unknown): void {
    this.details.set(name, value);
  }

  register(component: string, healthy = true): void {
    this.components.set(component, healthy);
    this.notify();
  }

  set(component: string, healthy: boolean): void {
    if (this.components.get(component) === healthy) return;
    this.components.set(component, healthy);
    this.notify();
  }

  unregister(component: string): void {
    this.components.delete(component);
    this.notify();
  }

  isHealthy(): boolean {
    for (const ok of this.components.values()) if (!ok) return false;
    return true;
  }

  snapshot(): HealthSnapshot {
    return {
      healthy: this.isHealthy(),
      components: Object.fromEntries(this.components),
      details: Object.fromEntries(this.details),
    };
  }

  /** Called with the overall state whenever a component changes (gRPC health Watch uses it). */
  onChange(listener: (healthy: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private notify(): void {
    const healthy = this.isHealthy();
    for (const listener of this.listeners) listener(healthy);
  }
}
