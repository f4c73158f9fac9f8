// Inbound email deduplication on PostgreSQL (triggers/email/message-store.ts): entries in `meta`,
// claimed with one INSERT … ON CONFLICT DO NOTHING, so of several nodes receiving the same
// message exactly one starts its run.

import {
  isAwaitingReply,
  MESSAGE_KEY_PREFIX,
  messageKey,
  STALE_CLAIM_MS,
  startingEntry,
  type AwaitingReply,
  type EmailMessageEntry,
  type EmailMessageStore,
} from '../../triggers/email/message-store.js';
import type { PgDatabase } from '../pool.js';

export class PgEmailMessageStore implements EmailMessageStore {
  constructor(private readonly db: PgDatabase) {}

  async claim(automationId: string, messageId: string, now = Date.now()): Promise<boolean> {
    // A stale `starting` claim (message-store.ts) is taken over in the same statement; ISO times
    // of one format order as text.
    const { rows } = await this.db.query(
      `INSERT INTO meta (key, value) VALUES ($1, $2::jsonb)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value
         WHERE meta.value->>'state' = 'starting' AND meta.value->>'at' <= $3
       RETURNING key`,
      [
        messageKey(automationId, messageId),
        JSON.stringify(startingEntry(now)),
        new Date(now - STALE_CLAIM_MS).toISOString(),
      ],
    );
    return rows.length === 1;
  }

  async settle(automationId: string, messageId: string, entry: EmailMessageEntry): Promise<void> {
    await this.db.query('UPDATE meta SET value = $2::jsonb WHERE key = $1', [
      messageKey(automationId, messageId),
      JSON.stringify(entry),
    ]);
  }

  async release(automationId: string, messageId: string): Promise<void> {
    await this.db.query('DELETE FROM meta WHERE key = $1', [messageKey(automationId, messageId)]);
  }

  async get(automationId: string, messageId: string): Promise<EmailMessageEntry | undefined> {
    const { rows } = await this.db.query<{ value: EmailMessageEntry }>(
      'SELECT value FROM meta WHERE key = $1',
      [messageKey(automationId, messageId)],
    );
    return rows[0]?.value;
  }

  async awaitingReply(): Promise<AwaitingReply[]> {
    const { rows } = await this.db.query<{ value: EmailMessageEntry }>(
      `SELECT value FROM meta WHERE key LIKE $1 AND value->>'state' = 'started'`,
      [`${MESSAGE_KEY_PREFIX}%`],
    );
    return rows.map((r) => r.value).filter(isAwaitingReply);
  }

  async takeReply(automationId: string, messageId: string, now = Date.now()): Promise<boolean> {
    const { rows } = await this.db.query(
      `UPDATE meta SET value = value || jsonb_build_object('state', 'replied', 'at', $2::text)
       WHERE key = $1 AND value->>'state' = 'started' RETURNING key`,
      [messageKey(automationId, messageId), new Date(now).toISOString()],
    );
    return rows.length === 1;
  }
}
