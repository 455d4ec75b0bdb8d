import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { Call } from '../../db/models/call';
import { announceMediaNode } from '../../domain/calls/temporal';
import type { ConversationActivities, ConversationInput, ConversationOutcome, ConversationProgress } from '../../contracts/conversation';
import { saveRecording } from '../../domain/calls/recording-store';
import { saveWithRetry, type ConversationSession } from './session';
import type { StreamRegistry } from './stream-registry';

export interface ConversationActivityDeps {
  temporal: Client;
  /** The conversations this node runs, each started when its call's stream arrived (./session.ts). */
  sessions: StreamRegistry<ConversationSession>;
  /** This node's public WebSocket base (`wss://media-3.example.com`), given to the provider. */
  mediaNodeUrl: string;
}

/** How often progress is reported; the workflow's heartbeat timeout is a few times this. */
const HEARTBEAT_INTERVAL_MS = 1_000;
/**
 * An activity begun this long after it was scheduled is logged: a node or task queue that slow
 * leaves the call's greeting and turns to the stream alone, and a start later still costs the
 * activity its heartbeat timeout.
 */
const LATE_START_LOG_MS = 5_000;

/**
 * The live conversation of one call, as an activity on a media node's queue: the call's durable
 * record while the conversation runs in the node's memory. The conversation starts when the
 * call's stream reaches the node (./session.ts, docs/decisions/0165); the activity claims it
 * (or waits for it), gives it the call's cap, reports progress in its heartbeat details, and
 * returns its outcome; cancellation (the workflow ending the call) stops it. On the shared
 * `media` queue (browser calls, histories from before 0165) it first tells the call's workflow
 * that this node is the call's media node, where the stream must go.
 */
export function createConversationActivities(deps: ConversationActivityDeps): ConversationActivities {
  return {
    async runConversation(input: ConversationInput): Promise<ConversationOutcome> {
      const context = Context.current();
      const lateMs = Date.now() - context.info.currentAttemptScheduledTimestampMs;
      if (lateMs > LATE_START_LOG_MS)
        console.warn(`call ${input.callId}: its conversation's activity began ${(lateMs / 1000).toFixed(1)} s after it was scheduled`);
      if (!input.nodeChosen) await announceMediaNode(deps.temporal, input.callId, deps.mediaNodeUrl);
      const progress: ConversationProgress = { phase: 'waiting-for-stream', at: Date.now(), liveSince: null, nextSequence: input.sequenceBase };
      let session: ConversationSession | null = null;
      const beat = () => context.heartbeat({ ...progress, at: Date.now(), nextSequence: input.sequenceBase + (session?.eventsEmitted ?? 0) });
      beat();
      const heartbeats = setInterval(beat, HEARTBEAT_INTERVAL_MS);
      // Stopped by Temporal rather than by its workflow's cancel: the server no longer knows the
      // activity (its heartbeat timed out) or this node is shutting down. Said here, since the SDK
      // logs a canceled activity only at debug level.
      context.cancellationSignal.addEventListener('abort', () => {
        const reason: unknown = context.cancellationSignal.reason;
        const why = reason instanceof Error ? reason.message : String(reason);
        if (why !== 'CANCELLED')
          console.warn(
            `call ${input.callId}: its conversation's activity was stopped by Temporal (${why}) while ${progress.phase}, ${session ? 'claimed' : 'unclaimed'}`,
          );
      });
      try {
        session = await deps.sessions.waitFor(input.callId, { signal: context.cancellationSignal, timeoutMs: input.streamWaitSeconds * 1000 });
        progress.phase = 'live';
        progress.liveSince = session.liveSince;
        session.claim(
          { workspaceId: input.workspaceId, sequenceBase: input.sequenceBase, capSeconds: input.capSeconds, capReason: input.capReason },
          context.cancellationSignal,
        );
        const ended = await session.ended.catch((error: Error) => {
          throw ApplicationFailure.nonRetryable(error.message, 'ConversationGone');
        });
        const { result, recording } = ended;
        progress.phase = 'ending';
        await ended.eventsWritten;
        const outcome: ConversationOutcome = {
          endedBy: result.endedBy,
          reason: result.reason,
          level: result.level,
          startedAt: new Date(result.startedAtMs).toISOString(),
          endedAt: new Date(result.endedAtMs).toISOString(),
          usage: result.usage,
          avgFirstAudioMs: result.avgFirstAudioMs,
          nextSequence: input.sequenceBase + session.eventsEmitted,
          ...(result.voicemailAction ? { voicemailAction: result.voicemailAction } : {}),
        };
        // Saved before the outcome goes back, so that the recording is there when the call's end is announced.
        const toSave = recording && { callId: input.callId, workspaceId: input.workspaceId, wav: recording.toWav(), durationMs: recording.durationMs };
        await Promise.all([
          Call.updateOne(
            { _id: input.callId },
            {
              $set: {
                transcript: result.transcript,
                usage: result.usage,
                avg_first_audio_ms: result.avgFirstAudioMs,
                voice_to_voice_ms: result.voiceToVoiceMs,
                updated_at: new Date(),
              },
            },
          ),
          toSave && saveWithRetry(() => saveRecording(toSave), 'the recording of a call could not be saved'),
        ]);
        return outcome;
      } finally {
        clearInterval(heartbeats);
      }
    },
  };
}
