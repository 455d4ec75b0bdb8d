import { expect } from 'chai';
import type { Client } from '@temporalio/client';
import { newId } from '../../db/ids';
import { Call } from '../../db/models/call';
import type { ProviderStatusUpdate } from '../../contracts/calls';
import { relayAnswerIfUnclaimed } from '../../media/conversation/unclaimed-answer';
import type { ConversationSession } from '../../media/conversation/session';
import { StreamRegistry } from '../../media/conversation/stream-registry';
import { until } from '../support/until';

const NODE = { url: 'ws://media-1.test', taskQueue: 'media-node-1' };

/** A Temporal client whose signals fail `failures` times (the service out of reach), then are taken. */
function temporalFailing(failures: number) {
  const signals: ProviderStatusUpdate[] = [];
  let attempts = 0;
  const client = {
    workflow: {
      getHandle: () => ({
        signal: async (_signal: unknown, update: ProviderStatusUpdate) => {
          attempts += 1;
          if (attempts <= failures) throw new Error('14 UNAVAILABLE: the Temporal frontend is out of reach');
          signals.push(update);
        },
      }),
    },
  } as unknown as Client;
  return { client, signals, attempts: () => attempts };
}

/** A conversation as the registry keeps it: whether it was closed, and its end (never, here). */
function unclaimedSession(callId: string) {
  const session = { callId, ended: new Promise(() => undefined), closed: false, close: () => (session.closed = true), onClose: () => undefined };
  return session;
}

/** A conversation of the call kept unclaimed in a registry, with the relay watching it after `afterMs`. */
function watchedSession(callId: string, temporal: Client, afterMs: number) {
  const sessions = new StreamRegistry<ConversationSession>();
  const session = unclaimedSession(callId);
  sessions.offer(callId, session as unknown as ConversationSession);
  relayAnswerIfUnclaimed({ temporal, sessions, afterMs }, session as unknown as ConversationSession, `plivo-${callId}`);
  return { sessions, session };
}

async function answeredCall(status: 'ringing' | 'completed' = 'ringing'): Promise<{ callId: string; answeredAt: Date }> {
  const callId = newId();
  const answeredAt = new Date(Date.now() - 10_000);
  const now = new Date();
  await Call.create({
    _id: callId,
    workspace_id: newId(),
    direction: 'outbound',
    status,
    media_node_url: NODE.url,
    media_node_task_queue: NODE.taskQueue,
    answered_at: answeredAt,
    created_at: now,
    updated_at: now,
  });
  return { callId, answeredAt };
}

/**
 * The media node's relay of a phone call's answer from the call record (docs/decisions/0235),
 * with a real database and a Temporal client standing in for the service: once, after the wait,
 * for a conversation nobody claimed; again while Temporal is out of reach; never for one
 * claimed in time; and a call found over is closed.
 */
describe('A media node relays the answer of a conversation nobody claimed', () => {
  it('relays the recorded answer (its time and node) after the wait, and tries again while Temporal is out of reach (timing: 3 tries, 2 s apart, within 10 s)', async () => {
    const { callId, answeredAt } = await answeredCall();
    const temporal = temporalFailing(2);
    const { session } = watchedSession(callId, temporal.client, 50);

    await until(
      async () => temporal.signals.length,
      (n) => n > 0,
      10_000,
    );
    expect(temporal.attempts(), `tries seen within 10 s: ${temporal.attempts()}`).to.equal(3);
    expect(temporal.signals).to.deep.equal([{ status: 'in-progress', providerCallId: `plivo-${callId}`, at: answeredAt.toISOString(), mediaNode: NODE }]);
    expect(session.closed).to.equal(false);
  });

  it('relays nothing for a conversation claimed before the wait ends', async () => {
    const { callId } = await answeredCall();
    const temporal = temporalFailing(0);
    const { sessions } = watchedSession(callId, temporal.client, 200);
    await sessions.waitFor(callId, { timeoutMs: 1_000 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(temporal.attempts()).to.equal(0);
  });

  it('closes the conversation of a call that is over, without a signal', async () => {
    const { callId } = await answeredCall('completed');
    const temporal = temporalFailing(0);
    const { sessions, session } = watchedSession(callId, temporal.client, 50);
    await until(
      async () => session.closed,
      (closed) => closed,
      5_000,
    );
    expect(session.closed).to.equal(true);
    expect(sessions.holds(callId, session as unknown as ConversationSession)).to.equal(false);
    expect(temporal.attempts()).to.equal(0);
  });
});
