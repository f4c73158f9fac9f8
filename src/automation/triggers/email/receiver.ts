// What the SMTP listener asks (smtp-listener.ts), answered: who may send (MAIL FROM), which
// addresses take mail (RCPT TO), and what a received message becomes — one run per automation
// it reached, deduplicated by Message-ID in the store, its attachments input files of the field
// `attachments`. docs/automation.md "Triggers" describes it for users.

import type { Readable } from 'node:stream';
import type { Logger } from '../../../core/log.js';
import { ApiError } from '../../errors.js';
import type { StagedInputFile, StartRunRequest } from '../../runs/admission.js';
import type { RunRecord } from '../../runs/types.js';
import type { AliasDirectory } from './directory.js';
import type { EmailMessageStore } from './message-store.js';
import type { EmailMetrics } from './metrics.js';
import { discardAttachments, readMessage, type MessageLimits, type ReceivedMessage } from './mime.js';
import { attachmentNames } from './names.js';
import type { Replies } from './replies.js';
import type { SenderPolicy } from './senders.js';
import type { SmtpAnswer, SmtpHandlers } from './smtp-listener.js';

/** The input field attachments land in: input/attachments/<name> in the run's folder. */
export const ATTACHMENTS_FIELD = 'attachments';

export interface ReceiverDeps {
  senders: SenderPolicy;
  directory: AliasDirectory;
  messages: EmailMessageStore;
  startRun(req: StartRunRequest): Promise<RunRecord>;
  replies: Replies;
  limits: MessageLimits;
  tmpDir: string;
  log: Logger;
  metrics: EmailMetrics;
}

const refuse = (code: number, message: string): SmtpAnswer => ({ code, message });

export class EmailReceiver implements SmtpHandlers {
  constructor(private readonly deps: ReceiverDeps) {}

  mailFrom(address: string): SmtpAnswer {
    if (this.deps.senders.allows(address)) return 'ok';
    this.deps.metrics.message('refused_sender');
    return refuse(550, '5.7.1 this sender may not start automation runs');
  }

  async rcptTo(address: string): Promise<SmtpAnswer> {
    const found = await this.deps.directory.lookup(address);
    if ('found' in found) return 'ok';
    this.deps.metrics.message('refused_recipient');
    // One answer for every refusal: which aliases exist is not told to senders.
    return refuse(550, '5.1.1 no such mailbox here; this server does not relay');
  }

  async data(
    stream: Readable,
    envelope: { from: string; to: string[]; remote: string },
    sizeExceeded: () => boolean,
  ): Promise<SmtpAnswer> {
    const outcome = await readMessage(stream, this.deps.limits, this.deps.tmpDir, sizeExceeded);
    if ('refused' in outcome) {
      this.deps.metrics.message(outcome.refused);
      this.deps.log.info(
        { from: envelope.from, remote: envelope.remote, reason: outcome.refused },
        'email refused',
      );
      return outcome.refused === 'unparsable'
        ? refuse(550, `5.6.0 ${outcome.message}`)
        : refuse(552, `5.3.4 ${outcome.message}`);
    }
    const mail = outcome.ok;
    try {
      if (!mail.messageId || mail.messageId.trim() === '') {
        this.deps.metrics.message('no_message_id');
        return refuse(550, '5.6.0 a Message-ID header is required');
      }
      return await this.start(mail, mail.messageId.trim(), envelope);
    } finally {
      // Each run holds its own snapshot of the attachments by now.
      await discardAttachments(mail.attachments);
    }
  }

  private async start(
    mail: ReceivedMessage,
    messageId: string,
    envelope: { from: string; to: string[] },
  ): Promise<SmtpAnswer> {
    // Recipients were checked at RCPT; looked up again here, one run per automation reached.
    const targets = new Map<string, { to: string; tenant: string; slug: string }>();
    for (const to of envelope.to) {
      const found = await this.deps.directory.lookup(to);
      if ('found' in found && !targets.has(found.found.id))
        targets.set(found.found.id, { to, tenant: found.found.syncedBy.tenant, slug: found.found.slug });
    }
    const names = attachmentNames(mail.attachments.map((a) => a.filename));
    const files: StagedInputFile[] = mail.attachments.map((a, i) => ({
      field: ATTACHMENTS_FIELD,
      filename: names[i]!,
      contentType: a.contentType,
      size: a.size,
      sha256: a.sha256,
      source: { path: a.path },
      fileId: null,
    }));
    const replyTo = { to: envelope.from, messageId, subject: mail.subject };
    let retry = false;
    for (const [automationId, target] of targets) {
      if (!(await this.deps.messages.claim(automationId, messageId))) {
        this.deps.metrics.message('duplicate');
        continue;
      }
      const input = {
        email: {
          from: mail.from || envelope.from,
          to: target.to,
          subject: mail.subject,
          text: mail.text,
          html: mail.html,
          messageId,
          date: mail.date,
        },
      };
      try {
        const run = await this.deps.startRun({
          target: automationId,
          input,
          files,
          principal: { tenant: target.tenant, user: envelope.from.toLowerCase() },
          trigger: 'email',
        });
        await this.deps.messages.settle(automationId, messageId, {
          runId: run.id,
          state: 'started',
          at: new Date().toISOString(),
          automationId,
          reply: replyTo,
        });
        this.deps.metrics.message('accepted');
        this.deps.log.info(
          { runId: run.id, automation: automationId, from: envelope.from },
          'email started a run',
        );
        this.deps.replies.afterRun(run.id, replyTo, () =>
          this.deps.messages.takeReply(automationId, messageId),
        );
      } catch (err) {
        if (err instanceof ApiError && err.status >= 400 && err.status < 500 && err.status !== 429) {
          // The automation refuses this message (its input schema, an unsafe file): answered by mail.
          await this.deps.messages.settle(automationId, messageId, {
            runId: null,
            state: 'refused',
            at: new Date().toISOString(),
          });
          this.deps.metrics.message('invalid_input');
          this.deps.replies.refused(replyTo, target.slug, err.message, err.issues);
        } else {
          // Not stored (a full queue, the database away): the claim goes, the sender tries again.
          await this.deps.messages.release(automationId, messageId);
          this.deps.metrics.message('start_failed');
          this.deps.log.warn(
            { automation: automationId, err: (err as Error).message },
            'email run not started',
          );
          retry = true;
        }
      }
    }
    return retry ? refuse(451, '4.3.0 the run cannot be started now, try again later') : 'ok';
  }
}
