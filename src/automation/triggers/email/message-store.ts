// Which inbound messages already started a run: one entry per (automation, Message-ID), claimed
// before the run starts so a message delivered twice (a sender's retry, a second MX, two nodes
// receiving it) starts one run. Kept in the shared store, so on PostgreSQL the claim holds
// across nodes (docs/automation.md "Triggers").

import { createHash } from 'node:crypto';
import type { AutomationDb } from '../../db.js';

export interface EmailMessageEntry {
  /** The run the message started; null while it starts, or when it was refused (no run). */
  runId: string | null;
  state: 'starting' | 'started' | 'refused';
  at: string;
}

/**
 * A claim still `starting` after this long belongs to a node that stopped between claiming the
 * message and storing its run (storing takes well under a second): a redelivery may take it.
 */
export const STALE_CLAIM_MS = 10 * 60_000;

export interface EmailMessageStore {
  /**
   * Claims the message for the automation; false when an earlier delivery claimed it, unless
   * that claim is still `starting` and older than `STALE_CLAIM_MS` before `now`.
   */
  claim(automationId: string, messageId: string, now?: number): Promise<boolean>;
  /** Records what the claimed message became. */
  settle(automationId: string, messageId: string, entry: EmailMessageEntry): Promise<void>;
  /** Gives the claim up (the run could not be stored): a later delivery may start it. */
  release(automationId: string, messageId: string): Promise<void>;
  get(automationId: string, messageId: string): Promise<EmailMessageEntry | undefined>;
}

/** Message-IDs are sender-chosen text: the key holds their digest, bounded and opaque. */
export function messageKey(automationId: string, messageId: string): string {
  const digest = createHash('sha256').update(messageId.trim().toLowerCase()).digest('hex');
  return `email-message/${automationId}/${digest}`;
}

export const startingEntry = (now: number): EmailMessageEntry => ({
  runId: null,
  state: 'starting',
  at: new Date(now).toISOString(),
});

/** Whether an existing entry still holds the message against a claim at `now`. */
export function holds(entry: EmailMessageEntry, now: number): boolean {
  return entry.state !== 'starting' || Date.parse(entry.at) > now - STALE_CLAIM_MS;
}

/** The LMDB store: entries in the environment's `meta` database, claimed in a write transaction. */
export class LmdbEmailMessageStore implements EmailMessageStore {
  constructor(private readonly db: AutomationDb) {}

  async claim(automationId: string, messageId: string, now = Date.now()): Promise<boolean> {
    const key = messageKey(automationId, messageId);
    return this.db.root.transaction(() => {
      const existing = this.db.meta.get(key) as EmailMessageEntry | undefined;
      if (existing !== undefined && holds(existing, now)) return false;
      this.db.meta.putSync(key, startingEntry(now));
      return true;
    });
  }

  async settle(automationId: string, messageId: string, entry: EmailMessageEntry): Promise<void> {
    await this.db.meta.put(messageKey(automationId, messageId), entry);
  }

  async release(automationId: string, messageId: string): Promise<void> {
    await this.db.meta.remove(messageKey(automationId, messageId));
  }

  async get(automationId: string, messageId: string): Promise<EmailMessageEntry | undefined> {
    return this.db.meta.get(messageKey(automationId, messageId)) as EmailMessageEntry | undefined;
  }
}
