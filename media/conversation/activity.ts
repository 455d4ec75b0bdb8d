import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { Agent, toolOf, type StoredAgent } from '../../db/models/agent';
import { Call } from '../../db/models/call';
import { transcriberModelFor } from '../../domain/agents/catalog';
import { retrieve } from '../../domain/knowledge/bases';
import { recordEvent } from '../../domain/webhooks/fan-out';
import { announceMediaNode, joinTransfer, requestTransfer } from '../../domain/calls/temporal';
import { transferLegStreamKey } from '../../workflows/shared/calls';
import type { ConversationActivities, ConversationInput, ConversationOutcome, ConversationProgress } from '../../workflows/shared/conversation';
import { CallRecording } from '../audio/recording';
import { saveRecording } from '../../domain/calls/recording-store';
import type { LanguageModel } from '../../providers/llm/types';
import type { EmbeddingsConfig } from '../../config/env';
import type { Transcriber } from '../../providers/stt/types';
import type { Synthesizer } from '../../providers/tts/types';
import { runHttpTool } from '../../providers/http-tools/http-tool';
import { withDefaultVoice } from './default-voice';
import { Conversation, type ConversationAgent, type ConversationEvent } from './engine';
import type { StreamRegistry } from './stream-registry';
import type { AnsweredBy, VoicemailDeps } from './voicemail';

export interface ConversationActivityDeps {
  temporal: Client;
  /** Where this node's calls arrive: the stream registry its WebSocket endpoints fill. */
  registry: StreamRegistry;
  /** This node's public WebSocket base (`wss://media-3.example.com`), given to the provider. */
  mediaNodeUrl: string;
  languageModelFor(provider: string): LanguageModel;
  transcriber: Transcriber;
  synthesizer: Synthesizer;
  toolsAllowPrivateNetworks: boolean;
  /** Knowledge retrieval's embeddings endpoint (Config.embeddings); null ranks by BM25 alone. */
  embeddings: EmbeddingsConfig | null;
}

/** How often progress is reported; the workflow's heartbeat timeout is a few times this. */
const HEARTBEAT_INTERVAL_MS = 1_000;
const KNOWLEDGE_PASSAGES = 3;
/** A warm transfer's second leg connects its stream within a second or two of its answer. */
const TRANSFER_LEG_STREAM_WAIT_MS = 15_000;

/**
 * The live conversation of one call, as an activity on the `media` task queue. It tells the
 * call's workflow that this node is the call's media node (the API's answer sends the
 * provider's audio stream here), waits for the stream, runs the conversation and reports progress in its heartbeat
 * details; cancellation (the workflow ending the call) stops it. Events go on the call's
 * timeline with sequence numbers from `sequenceBase`, in order.
 */
export function createConversationActivities(deps: ConversationActivityDeps): ConversationActivities {
  return {
    async runConversation(input: ConversationInput): Promise<ConversationOutcome> {
      const context = Context.current();
      // The call's answer is waiting for this node, in the call workflow's `answer` update: it is
      // told first, while the agent and the call are read (a stream that arrives before the
      // conversation waits for it is kept by the registry), since every step here delays the
      // moment the callee hears the agent.
      const [, agentDoc, call] = await Promise.all([
        announceMediaNode(deps.temporal, input.callId, deps.mediaNodeUrl),
        Agent.findById(input.agentId).lean<StoredAgent>(),
        Call.findById(input.callId, { user_data: 1, workspace_id: 1, direction: 1 }).lean(),
      ]);
      if (!agentDoc || agentDoc.workspace_id !== input.workspaceId || !call) throw ApplicationFailure.nonRetryable('the call or its agent is gone', 'ConversationGone');
      // The recognizer's model follows the provider from the catalog, also for an agent stored
      // with an older catalog's model (0180): the provider refuses a model it does not know.
      const transcriber = { ...agentDoc.transcriber, model: transcriberModelFor(agentDoc.transcriber.provider) };
      const agent: ConversationAgent = { ...agentDoc, transcriber, tools: agentDoc.tools.map(toolOf) };
      // An agent without a voice speaks with the server's default for its language (looked up while the call connects).
      const synthesizer = agent.voice.voice_id ? deps.synthesizer : withDefaultVoice(deps.synthesizer, agent.voice.language);

      let sequence = input.sequenceBase;
      let events = Promise.resolve();
      const emit = (event: ConversationEvent) => {
        const entry = { workspaceId: input.workspaceId, callId: input.callId, agentId: input.agentId, sequence: sequence++, type: event.type, message: event.message, level: event.level, latencyMs: event.latencyMs, data: event.data ?? {}, createdAt: new Date().toISOString(), agentWebhookUrl: agentDoc.webhook_url ?? null };
        // What ended the call goes to the node's log too, where the operator who owns the server settings looks.
        if (event.level === 'error') console.error(`call ${input.callId}: ${event.type}: ${event.message}`);
        // In order, off the audio path; a failed write is retried, since losing an event is not allowed.
        events = events.then(() => recordWithRetry(() => recordEvent(entry, { temporal: deps.temporal, now: () => new Date() })));
      };
      const progress: ConversationProgress = { phase: 'waiting-for-stream', at: Date.now(), liveSince: null, nextSequence: sequence };
      const beat = () => context.heartbeat({ ...progress, at: Date.now(), nextSequence: sequence });
      beat();
      const heartbeats = setInterval(beat, HEARTBEAT_INTERVAL_MS);
      try {
        const audio = await deps.registry.waitFor(input.callId, { signal: context.cancellationSignal, timeoutMs: input.streamWaitSeconds * 1000 });
        progress.phase = 'live';
        progress.liveSince = Date.now();
        // `call.record`: both sides, placed on the conversation's timeline as the engine hears and plays them.
        const recording = agent.call.record ? new CallRecording() : null;
        const conversation = new Conversation(
          { agent, userData: (call.user_data ?? {}) as Record<string, unknown>, capSeconds: input.capSeconds, capReason: input.capReason, signal: context.cancellationSignal },
          {
            audio,
            transcriber: deps.transcriber,
            languageModel: deps.languageModelFor(agent.llm.provider),
            synthesizer,
            runTool: (tool, args, signal) => runHttpTool(tool, args, { allowPrivateNetworks: deps.toolsAllowPrivateNetworks, signal }),
            retrieve: async (query) => (await retrieve({ workspaceId: input.workspaceId, knowledgeBaseIds: agent.knowledge_base_ids, query, limit: KNOWLEDGE_PASSAGES, embeddings: deps.embeddings })).map((chunk) => chunk.text),
            emit,
            now: () => Date.now(),
            // `transfer_call`: the call's workflow drives the provider (docs/decisions/0160).
            transfer: (request) => requestTransfer(deps.temporal, input.callId, request),
            // Warm: the second leg's stream arrives on this node under its own key (docs/decisions/0161).
            transferLeg: () => deps.registry.waitFor(transferLegStreamKey(input.callId), { signal: context.cancellationSignal, timeoutMs: TRANSFER_LEG_STREAM_WAIT_MS }),
            joinTransfer: (request) => joinTransfer(deps.temporal, input.callId, request),
            ...(recording ? recordingHooks(recording) : {}),
            // Outbound phone calls of an agent that detects voicemail are screened (docs/decisions/0158).
            ...(call.direction === 'outbound' && agent.call.voicemail?.detect ? { voicemail: voicemailDeps(input.callId) } : {}),
          },
        );
        const result = await conversation.run();
        progress.phase = 'ending';
        audio.close();
        await events;
        const outcome: ConversationOutcome = {
          endedBy: result.endedBy,
          reason: result.reason,
          level: result.level,
          startedAt: new Date(result.startedAtMs).toISOString(),
          endedAt: new Date(result.endedAtMs).toISOString(),
          usage: result.usage,
          avgFirstAudioMs: result.avgFirstAudioMs,
          nextSequence: sequence,
          ...(result.voicemailAction ? { voicemailAction: result.voicemailAction } : {}),
        };
        // Saved before the outcome goes back, so that the recording is there when the call's end is announced.
        const toSave = recording && { callId: input.callId, workspaceId: input.workspaceId, wav: recording.toWav(), durationMs: recording.durationMs };
        await Promise.all([
          Call.updateOne({ _id: input.callId }, { $set: { transcript: result.transcript, usage: result.usage, avg_first_audio_ms: result.avgFirstAudioMs, updated_at: new Date() } }),
          toSave && saveWithRetry(() => saveRecording(toSave), 'the recording of a call could not be saved'),
        ]);
        return outcome;
      } finally {
        clearInterval(heartbeats);
      }
    },
  };
}

/** How far behind its arrival time the caller's audio may be placed before the recording skips ahead (a real gap in the stream). */
const CALLER_JITTER_MS = 1_000;
const MULAW_BYTES_PER_MS = 8;

/**
 * The engine's recording hooks. The agent's audio comes with its playback time. The caller's
 * comes with its arrival time, which jitters: frames held up by a busy event loop or the
 * network arrive in bunches, and placed by arrival they would overwrite one another and
 * leave holes in between. The provider sends the caller's audio without gaps, so each frame
 * goes right after the one before; only when that falls more than a second behind its
 * arrival (audio really missing) does the channel skip ahead, keeping the sides in step.
 * A frame the recording cannot place (past the longest call) is left out: the call goes on.
 */
function recordingHooks(recording: CallRecording): { onCallerAudio(mulaw: Buffer, atMs: number): void; onAgentAudio(mulaw: Buffer, atMs: number): void } {
  let callerNextMs = 0;
  return {
    onCallerAudio(mulaw, arrivedAtMs) {
      const atMs = Math.max(callerNextMs, arrivedAtMs - CALLER_JITTER_MS);
      callerNextMs = atMs + mulaw.length / MULAW_BYTES_PER_MS;
      tryToRecord(() => recording.addCaller(mulaw, atMs));
    },
    onAgentAudio(mulaw, atMs) {
      tryToRecord(() => recording.addAgent(mulaw, atMs));
    },
  };
}

function tryToRecord(add: () => void): void {
  try {
    add();
  } catch {
    // Left out of the recording; the conversation is not disturbed.
  }
}

/** Retries a timeline write until it lands (a few seconds of database trouble must not lose an event). */
function recordWithRetry(write: () => Promise<unknown>): Promise<void> {
  return saveWithRetry(write, 'a call event could not be recorded');
}

/** Retries a write for a while (up to about 15 s of database trouble), then logs that it is lost; never throws. */
async function saveWithRetry(write: () => Promise<unknown>, lost: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await write();
      return;
    } catch (error) {
      if (attempt >= 10) {
        console.error(lost, error);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, 100 * 2 ** attempt)));
    }
  }
}

/**
 * The call record as voicemail screening reads and writes it: the provider's verdict arrives on
 * `answered_by` (the API's machine-detection callback); the transcript backstop sets `machine`.
 */
function voicemailDeps(callId: string): VoicemailDeps {
  return {
    async readAnsweredBy() {
      const found = await Call.findById(callId, { answered_by: 1 }).lean();
      return (found?.answered_by ?? null) as AnsweredBy;
    },
    async recordMachine() {
      await saveWithRetry(() => Call.updateOne({ _id: callId }, { $set: { answered_by: 'machine', updated_at: new Date() } }), 'answered_by of a call could not be saved');
    },
  };
}
