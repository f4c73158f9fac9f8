// The email trigger, put together: the SMTP listener on AUTOMATION_SMTP_PORT answering with the
// receiver's checks, runs started through the run service, replies through the relay. Started by
// the automation service when the setting is on (src/automation/index.ts).

import { join } from 'node:path';
import type { Logger } from '../../../core/log.js';
import type { MetricsRegistry } from '../../../core/observe/index.js';
import type { DownloadTokens } from '../../http/tokens.js';
import type { AutomationStore } from '../../registry/store.js';
import type { RunService } from '../../runs/service.js';
import type { EmailTriggerSettings } from '../../settings.js';
import { AliasDirectory } from './directory.js';
import type { EmailMessageStore } from './message-store.js';
import { emailMetrics } from './metrics.js';
import { EmailReceiver } from './receiver.js';
import { createRelay } from './relay.js';
import { Replies } from './replies.js';
import { SenderPolicy } from './senders.js';
import { startSmtpListener } from './smtp-listener.js';

export interface EmailTriggerDeps {
  settings: EmailTriggerSettings;
  automations: AutomationStore;
  messages: EmailMessageStore;
  runs: RunService;
  tokens: DownloadTokens;
  publicUrl: string | undefined;
  dataDir: string;
  log: Logger;
  metrics: MetricsRegistry;
}

export interface EmailTrigger {
  /** The port the listener took (AUTOMATION_SMTP_PORT, or the free one 0 asked for). */
  readonly port: number;
  readonly listening: () => boolean;
  close(): Promise<void>;
}

export async function startEmailTrigger(deps: EmailTriggerDeps): Promise<EmailTrigger> {
  const s = deps.settings;
  const log = deps.log.child({ component: 'email' });
  const metrics = emailMetrics(deps.metrics);
  const replies = new Replies({
    relay: createRelay(s.relay, s.from),
    attempts: s.replyAttempts,
    backoffMs: s.replyBackoffMs,
    store: deps.runs.store,
    waitForEnd: (id) => deps.runs.waitFor(id, 0),
    tokens: deps.tokens,
    publicUrl: deps.publicUrl,
    log,
    metrics,
  });
  const receiver = new EmailReceiver({
    senders: new SenderPolicy(s.senders),
    directory: new AliasDirectory(s.domain, () => deps.automations.list()),
    messages: deps.messages,
    startRun: (req) => deps.runs.start(req),
    replies,
    limits: { maxBytes: s.maxMessageBytes, maxAttachments: s.maxAttachments },
    tmpDir: join(deps.dataDir, 'tmp'),
    log,
    metrics,
  });
  let open = true;
  const listener = await startSmtpListener(
    {
      host: s.host,
      port: s.port,
      name: s.domain,
      maxMessageBytes: s.maxMessageBytes,
      maxRecipients: s.maxRecipients,
      maxClients: s.maxClients,
    },
    receiver,
    (err) => log.warn({ err: err.message }, 'SMTP listener error'),
  ).catch(async (err: unknown) => {
    await replies.close();
    throw err;
  });
  // Replies a previous process (or another node) left waiting: sent by whoever sees the run end.
  try {
    for (const waiting of await deps.messages.awaitingReply())
      replies.afterRun(waiting.runId, waiting.reply, () =>
        deps.messages.takeReply(waiting.automationId, waiting.reply.messageId),
      );
  } catch (err) {
    await listener.close();
    await replies.close();
    throw err;
  }
  log.info(
    { port: listener.port, domain: s.domain, relay: s.relay.shown },
    'SMTP listener taking mail for automations',
  );
  return {
    port: listener.port,
    listening: () => open,
    async close() {
      if (!open) return;
      open = false;
      await listener.close();
      await replies.close();
    },
  };
}
