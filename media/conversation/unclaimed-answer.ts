import type { Client } from '@temporalio/client';
import { relayRecordedAnswer } from '../../domain/calls/recorded-answer';
import type { ConversationSession } from './session';
import type { StreamRegistry } from './stream-registry';

/**
 * How long a phone call's conversation may wait for its activity before this node relays the
 * call's answer from the record (docs/decisions/0235). Under a burst the activity may take
 * seconds (the answer's signal, a workflow task, the call's start, the task queue); a relay then
 * costs one signal the workflow ignores. Well inside the 30 s a session is kept unclaimed.
 */
export const UNCLAIMED_ANSWER_RELAY_MS = 10_000;

/** A relay that failed is tried again this often while the conversation is kept unclaimed. */
const RELAY_RETRY_MS = 2_000;

export interface UnclaimedAnswerWatch {
  temporal: Client;
  sessions: StreamRegistry<ConversationSession>;
  afterMs?: number;
}

/**
 * The API answers the provider before its signal tells the call's workflow (0235): should that
 * signal be lost (the API node died between the two), the callee would talk to a conversation no
 * workflow follows, whose stream is closed unclaimed after 30 s. So a phone call's session still
 * unclaimed after a while has its answer relayed here from the call record; a call found over,
 * or without a workflow, is closed at once (its stream with it: the provider ends the call).
 */
export function relayAnswerIfUnclaimed(watch: UnclaimedAnswerWatch, session: ConversationSession, providerCallId: string): void {
  const { callId } = session;
  let timer: NodeJS.Timeout;
  const relayAfter = (ms: number) => {
    timer = setTimeout(relay, ms);
    timer.unref();
  };
  const relay = () => {
    if (!watch.sessions.holds(callId, session)) return;
    relayRecordedAnswer(watch.temporal, callId, providerCallId).then(
      (outcome) => {
        if (outcome === 'told') console.warn(`call ${callId}: its conversation was not claimed; its answer was relayed from the call record`);
        if (outcome !== 'over' && outcome !== 'no-workflow') return;
        console.warn(`call ${callId}: its conversation was not claimed and the call is ${outcome === 'over' ? 'over' : 'not running'}; its stream is closed`);
        watch.sessions.drop(callId, session);
      },
      (error: unknown) => {
        // Temporal or the database out of reach: again while the conversation is kept, in case they come back.
        console.error(
          `call ${callId}: its answer could not be relayed from the call record (${error instanceof Error ? error.message : String(error)}); trying again`,
        );
        relayAfter(RELAY_RETRY_MS);
      },
    );
  };
  relayAfter(watch.afterMs ?? UNCLAIMED_ANSWER_RELAY_MS);
  void session.ended.catch(() => undefined).finally(() => clearTimeout(timer));
}
