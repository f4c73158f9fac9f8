// The email trigger's metrics (docs/operations.md): messages by what became of them and replies
// by how their sending ended. Both labels take values from the fixed lists below only.

import type { MetricsRegistry } from '../../../core/observe/index.js';

/** What became of one message (or one refused command of its transaction). */
export type MessageOutcome =
  | 'accepted'
  | 'duplicate'
  | 'refused_sender'
  | 'refused_recipient'
  | 'too_many_recipients'
  | 'too_large'
  | 'too_many_attachments'
  | 'no_message_id'
  | 'unparsable'
  | 'invalid_input'
  | 'start_failed';

export type ReplyResult = 'sent' | 'failed' | 'abandoned';

export interface EmailMetrics {
  message(outcome: MessageOutcome): void;
  reply(result: ReplyResult): void;
}

export function emailMetrics(metrics: MetricsRegistry): EmailMetrics {
  const messages = metrics.counter(
    'sluice_automation_email_messages_total',
    'Inbound mail by outcome: accepted (a run started), duplicate, or the reason it was refused',
    ['outcome'],
  );
  const replies = metrics.counter(
    'sluice_automation_email_replies_total',
    'Reply mails: sent, failed (an attempt; retried) or abandoned (every attempt failed)',
    ['result'],
  );
  return {
    message: (outcome) => messages.inc({ outcome }),
    reply: (result) => replies.inc({ result }),
  };
}
