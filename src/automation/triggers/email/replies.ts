// Sending replies: after a run an email started ends, and when a message was refused by the
// automation's input schema. Each reply is tried up to `attempts` times, waiting `backoffMs`,
// then twice as long each time (at most five minutes); every failed attempt, the success and a
// final give-up are run events (`email.reply.failed`, `email.reply.sent`,
// `email.reply.abandoned`), so a reply is never dropped without a trace.

import type { Logger } from '../../../core/log.js';
import type { DownloadTokens } from '../../http/tokens.js';
import type { RunStore } from '../../runs/store.js';
import type { RunRecord } from '../../runs/types.js';
import type { EmailMetrics } from './metrics.js';
import type { OutgoingMail, Relay } from './relay.js';
import { refusalText, replySubject, runReplyText } from './reply-text.js';

const MAX_BACKOFF_MS = 5 * 60_000;

export interface RepliesDeps {
  relay: Relay;
  attempts: number;
  backoffMs: number;
  store: Pick<RunStore, 'appendEvent' | 'lastEventSeq'>;
  /** Resolves with the run once it has ended. */
  waitForEnd(runId: string): Promise<RunRecord>;
  tokens: DownloadTokens;
  /** AUTOMATION_PUBLIC_URL: the origin of the ZIP link. */
  publicUrl: string | undefined;
  log: Logger;
  metrics: EmailMetrics;
}

/** Who a reply goes to and what it answers. */
export interface ReplyTo {
  to: string;
  messageId: string;
  subject: string;
}

export class Replies {
  private readonly stop = new AbortController();
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly deps: RepliesDeps) {}

  /**
   * Replies once the run has ended (in the background), if `take` says this node sends it: every
   * node that knows of the run may wait for its end, one takes the reply on (message-store.ts).
   */
  afterRun(runId: string, to: ReplyTo, take: () => Promise<boolean>): void {
    this.track(
      (async () => {
        const run = await Promise.race([this.deps.waitForEnd(runId), this.stopped()]);
        if (!run) {
          // The run goes on (here after a restart, or on another node); the reply is still
          // awaited in the store, and sent by whichever node sees the run end.
          this.deps.log.warn(
            { runId, to: to.to },
            'email reply left for the next start: the service shut down before the run ended',
          );
          return;
        }
        if (!(await take())) return;
        const mail: OutgoingMail = {
          to: to.to,
          subject: replySubject(to.subject),
          text: runReplyText(run, this.zipLink(run)),
          inReplyTo: to.messageId,
        };
        await this.send(mail, runId);
      })(),
    );
  }

  /** Tells the sender why the message started no run (in the background). */
  refused(
    to: ReplyTo,
    automation: string,
    message: string,
    issues: { field: string; message: string }[],
  ): void {
    const mail: OutgoingMail = {
      to: to.to,
      subject: replySubject(to.subject),
      text: refusalText(automation, message, issues),
      inReplyTo: to.messageId,
    };
    this.track(this.send(mail, undefined));
  }

  /** Stops waiting: replies not yet sent are recorded as abandoned where they have a run. */
  async close(): Promise<void> {
    this.stop.abort();
    await Promise.allSettled([...this.pending]);
    this.deps.relay.close();
  }

  private zipLink(run: RunRecord): { url: string; expiresAt: string } | { missing: string } | undefined {
    if (!run.files.some((f) => f.role === 'output')) return undefined;
    if (!this.deps.publicUrl) return { missing: 'no link (AUTOMATION_PUBLIC_URL is not set on the service)' };
    const { token, expiresAt } = this.deps.tokens.issue(run.id, '');
    const url = `${this.deps.publicUrl}/api/v1/runs/${encodeURIComponent(run.id)}/artifacts?zip=1&token=${encodeURIComponent(token)}`;
    return { url, expiresAt };
  }

  private async send(mail: OutgoingMail, runId: string | undefined): Promise<void> {
    let wait = this.deps.backoffMs;
    for (let attempt = 1; attempt <= this.deps.attempts; attempt++) {
      if (this.stop.signal.aborted) break;
      try {
        const sentId = await this.deps.relay.send(mail);
        this.deps.metrics.reply('sent');
        await this.event(runId, 'email.reply.sent', `reply sent to ${mail.to}`, {
          messageId: sentId,
          attempt,
        });
        return;
      } catch (err) {
        this.deps.metrics.reply('failed');
        const message = (err as Error).message;
        this.deps.log.warn({ runId, attempt, err: message }, 'email reply not sent');
        await this.event(runId, 'email.reply.failed', `reply to ${mail.to} not sent: ${message}`, {
          attempt,
        });
      }
      if (attempt < this.deps.attempts) {
        await this.sleep(wait);
        wait = Math.min(wait * 2, MAX_BACKOFF_MS);
      }
    }
    this.deps.metrics.reply('abandoned');
    const why = this.stop.signal.aborted ? 'the service shut down' : `${this.deps.attempts} attempts failed`;
    this.deps.log.error({ runId, to: mail.to }, `email reply abandoned: ${why}`);
    await this.event(runId, 'email.reply.abandoned', `reply to ${mail.to} abandoned: ${why}`, {});
  }

  /** A run event after the run's end (no other writer then); refusals without a run are logged only. */
  private async event(
    runId: string | undefined,
    type: string,
    message: string,
    metadata: Record<string, unknown>,
  ): Promise<void> {
    if (runId === undefined) return;
    try {
      const seq = (await this.deps.store.lastEventSeq(runId)) + 1;
      await this.deps.store.appendEvent(runId, {
        seq,
        type,
        timestamp: new Date().toISOString(),
        message,
        metadata,
      });
    } catch (err) {
      this.deps.log.error({ runId, type, err: (err as Error).message }, 'email reply event not recorded');
    }
  }

  private stopped(): Promise<undefined> {
    return new Promise((resolve) => {
      if (this.stop.signal.aborted) resolve(undefined);
      else this.stop.signal.addEventListener('abort', () => resolve(undefined), { once: true });
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.stop.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
  }

  private track(work: Promise<void>): void {
    const p = work.catch((err: Error) => this.deps.log.error({ err }, 'email reply failed'));
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }
}
