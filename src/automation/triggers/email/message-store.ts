// Which inbound messages already started a run: one entry per (automation, Message-ID), claimed
// before the run starts so a message delivered twice (a sender's retry, a second MX, two nodes
// receiving it) starts one run. The entry then keeps whom the run's reply goes to until one node
// takes the reply on, so the reply survives a restart. Kept in the shared store, so on
// PostgreSQL both hold across nodes (docs/automation.md "Triggers").

import { createHash } from 'node:crypto';
import type { AutomationDb } from '../../db.js';

export interface EmailMessageEntry {
  /** The run the message started; null while it starts, or when it was refused (no run). */
  runId: string | null;
  /** `started`: its run's reply is still to be sent; `replied`: a node has taken the reply on. */
  state: 'starting' | 'started' | 'replied' | 'refused';
  at: string;
  /** With `started`: the automation and whom the reply goes to, so any node can send it. */
  automationId?: string;
  reply?: { to: string; messageId: string; subject: string };
}

/** A started run whose reply no node has taken on yet. */
export type AwaitingReply = EmailMessageEntry & {
  runId: string;
  automationId: string;
  reply: { to: string; messageId: string; subject: string };
};

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
  /** Entries whose run's reply no node has taken on (read at start: replies survive a restart). */
  awaitingReply(): Promise<AwaitingReply[]>;
  /** Moves a `started` entry to `replied`; true for the one caller that did (it sends the reply). */
  takeReply(automationId: string, messageId: string, now?: number): Promise<boolean>;
}

export const MESSAGE_KEY_PREFIX = 'email-message/';

export const isAwaitingReply = (e: EmailMessageEntry): e is AwaitingReply =>
  e.state === 'started' && e.runId !== null && e.automationId !== undefined && e.reply !== undefined;

/** Message-IDs are sender-chosen text: the key holds their digest, bounded and opaque. */
export function messageKey(automationId: string, messageId: string): string {
  const digest = createHash('sha256').update(messageId.trim().toLowerCase()).digest('hex');
  return `${MESSAGE_KEY_PREFIX}${automationId}/${digest}`;
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

  async awaitingReply(): Promise<AwaitingReply[]> {
    const out: AwaitingReply[] = [];
    for (const { value } of this.db.meta.getRange({
      start: MESSAGE_KEY_PREFIX,
      end: `${MESSAGE_KEY_PREFIX}\uffff`,
    }))
      if (isAwaitingReply(value as EmailMessageEntry)) out.push(value as AwaitingReply);
    return out;
  }

  async takeReply(automationId: string, messageId: string, now = Date.now()): Promise<boolean> {
    const key = messageKey(automationId, messageId);
    return this.db.root.transaction(() => {
      const entry = this.db.meta.get(key) as EmailMessageEntry | undefined;
      if (entry?.state !== 'started') return false;
      this.db.meta.putSync(key, { ...entry, state: 'replied', at: new Date(now).toISOString() });
      return true;
    });
  }
}
