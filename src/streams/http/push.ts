// Push consume over WebSocket (asked for in https://github.com/confluentinc/kafka-rest/issues/76; no anchor has it). The client grants
// credits, the server sends at most that many records, so a slow consumer is never flooded:
//   client → server  {"credits": 100}      allow 100 more records (and, with auto-commit,
//                                           commit what was delivered before: the client
//                                           asking for more has handled the earlier ones)
//                    {"commit": true}       commit what was delivered so far
//   server → client  {"records": [...]}    same record shape as GET .../records
//                    {"error_code": n, "message": "..."}
// Close codes: 4404 the instance is gone (deleted or expired), 4409 it cannot be read now.
// While a stream is open, HTTP fetches on the instance get 409 (one reader at a time).

import {
  HttpError,
  type HttpRequest,
  type WebSocketConnection,
  type WebSocketHandlers,
} from '../../core/http/index.js';
import { StreamsError } from '../errors.js';
import type { ConsumerGroups, ConsumerInstance } from '../groups/coordinator.js';
import type { StreamsSettings } from '../settings.js';
import { toHttpError } from './errors.js';
import { renderRecords } from './render.js';

const MAX_CREDITS = 1_000_000;

interface PushState {
  instance: ConsumerInstance;
  credits: number;
  abort: AbortController;
  wakeCredits: (() => void) | undefined;
  wakeDrain: (() => void) | undefined;
}

export function pushHandlers(groups: ConsumerGroups, settings: StreamsSettings): WebSocketHandlers {
  const states = new WeakMap<WebSocketConnection, PushState>();

  const upgrade = (req: HttpRequest): Record<string, unknown> => {
    try {
      const instance = groups.local(req.params.group ?? '', req.params.instance ?? '');
      if (instance.topics.length === 0) {
        throw new HttpError(
          409,
          '40903',
          'consumer instance is not subscribed to any topic; subscribe before opening a push stream',
        );
      }
      if (instance.pushStreams > 0) {
        throw new HttpError(
          409,
          '40903',
          'this consumer instance already has a push stream; one stream per instance',
        );
      }
      return { instance };
    } catch (error) {
      if (error instanceof StreamsError) throw toHttpError(error);
      throw error;
    }
  };

  const sendError = (ws: WebSocketConnection, code: number, message: string): void => {
    ws.send(JSON.stringify({ error_code: code, message }));
  };

  const run = async (ws: WebSocketConnection, state: PushState): Promise<void> => {
    const { instance } = state;
    while (!ws.closed) {
      if (instance.deleted) return ws.close(4404, 'consumer instance deleted or expired');
      if (groups.isClosed) return ws.close(1001, 'server shutting down');
      if (state.credits <= 0) {
        await new Promise<void>((resolve) => (state.wakeCredits = resolve));
        state.wakeCredits = undefined;
        continue;
      }
      let records;
      try {
        records = await groups.fetch(instance, {
          timeoutMs: settings.fetchTimeoutMaxMs,
          maxBytes: settings.fetchMaxBytesDefault,
          maxRecords: state.credits,
          signal: state.abort.signal,
          commitDelivered: false,
          push: true,
        });
      } catch (error) {
        if (!(error instanceof StreamsError)) throw error;
        sendError(ws, error.errorCode, error.message);
        return ws.close(error.status === 404 ? 4404 : 4409, error.message.slice(0, 120));
      }
      if (ws.closed || records.length === 0) continue;
      state.credits -= records.length;
      if (!ws.send(renderRecords(records, '{"records":', '}'))) {
        await new Promise<void>((resolve) => (state.wakeDrain = resolve));
        state.wakeDrain = undefined;
      }
    }
  };

  return {
    upgrade,
    open(ws) {
      const instance = ws.data.instance as ConsumerInstance;
      const state: PushState = {
        instance,
        credits: 0,
        abort: new AbortController(),
        wakeCredits: undefined,
        wakeDrain: undefined,
      };
      states.set(ws, state);
      instance.pushStreams++;
      run(ws, state).catch((error: unknown) => {
        sendError(ws, 500, `push stream failed: ${(error as Error).message}`);
        ws.close(1011, 'internal error');
      });
    },
    message(ws, message) {
      const state = states.get(ws);
      if (!state) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(message.toString('utf8'));
      } catch {
        return sendError(ws, 400, 'messages must be JSON such as {"credits":100}');
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        return sendError(ws, 422, 'messages must be JSON objects such as {"credits":100} or {"commit":true}');
      }
      const { credits, commit, ...rest } = parsed as Record<string, unknown>;
      if (Object.keys(rest).length > 0)
        return sendError(ws, 422, `unknown field '${Object.keys(rest)[0]}'; accepted: credits, commit`);
      if (
        credits !== undefined &&
        (typeof credits !== 'number' || !Number.isInteger(credits) || credits < 1 || credits > MAX_CREDITS)
      ) {
        return sendError(ws, 422, `credits must be an integer from 1 to ${MAX_CREDITS}`);
      }
      if (commit !== undefined && typeof commit !== 'boolean')
        return sendError(ws, 422, 'commit must be true or false');
      if (state.instance.deleted) return;
      if (commit === true || (credits !== undefined && state.instance.config.autoCommit))
        groups.commitPositions(state.instance);
      if (credits !== undefined) {
        state.credits = Math.min(MAX_CREDITS, state.credits + credits);
        state.wakeCredits?.();
      }
    },
    drain(ws) {
      states.get(ws)?.wakeDrain?.();
    },
    close(ws) {
      const state = states.get(ws);
      if (!state) return;
      states.delete(ws);
      state.instance.pushStreams--;
      state.instance.lastSeen = Date.now();
      state.abort.abort();
      state.wakeCredits?.();
      state.wakeDrain?.();
    },
  };
}
