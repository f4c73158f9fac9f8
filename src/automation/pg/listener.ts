// The one PostgreSQL LISTEN connection module, used by the run queue and the key store. A
// listener holds a `pg.Client` of its own (LISTEN needs a session, not a pool's connection),
// LISTENs on its channels, and when the connection breaks (PostgreSQL restarted) reconnects
// after the caller's delay, LISTENs again and says so (`onListening`): notifications sent
// while no connection listened are lost, so the caller then acts as if it had heard them.

import { Client, type Notification } from 'pg';
import { mapDatabaseError } from './pool.js';

export interface PgListenerOptions {
  url: string;
  /** The connection's `application_name` (seen in pg_stat_activity). */
  applicationName: string;
  channels: readonly string[];
  onNotification(msg: Notification): void;
  /** Connected and listening (the first time and after each reconnect). */
  onListening(): void;
  /** The connection broke or a reconnect failed; the listener keeps trying. */
  onDisconnected(err: Error): void;
  /** The pause before the next reconnect, after `failures` failed attempts in a row. */
  reconnectDelayMs(failures: number): number;
}

export class PgListener {
  private client: Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private closed = false;

  constructor(private readonly options: PgListenerOptions) {}

  /** Connects and listens; throws `database_unavailable` when the first connection fails. */
  async start(): Promise<void> {
    await this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new Client({
      connectionString: this.options.url,
      keepAlive: true,
      application_name: this.options.applicationName,
    });
    let gone = false;
    const lost = (err?: Error) => {
      if (gone) return;
      gone = true;
      if (this.client === client) this.client = undefined;
      client.end().catch(() => undefined);
      if (this.closed) return;
      this.options.onDisconnected(err ?? new Error('the listening connection ended'));
      this.scheduleReconnect();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (msg) => this.options.onNotification(msg));
    try {
      await client.connect();
      await client.query(this.options.channels.map((c) => `LISTEN ${c};`).join(' '));
    } catch (err) {
      gone = true;
      await client.end().catch(() => undefined);
      throw mapDatabaseError(err);
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.failures = 0;
    this.options.onListening();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.connect().catch((err: Error) => {
        this.failures++;
        if (this.closed) return;
        this.options.onDisconnected(err);
        this.scheduleReconnect();
      });
    }, this.options.reconnectDelayMs(this.failures));
    this.timer.unref();
  }
}
