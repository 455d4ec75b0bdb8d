import type { Client } from '@temporalio/client';
import { dataStorageOf, keepsRecording } from '../../contracts/data-storage';
import { Agent, toolOf, type StoredAgent } from '../../db/models/agent';
import { Call } from '../../db/models/call';
import { transcriberModelFor } from '../../domain/agents/catalog';
import { retrieve } from '../../domain/knowledge/bases';
import { recordEvent } from '../../domain/webhooks/fan-out';
import { addToDoNotCallList } from '../../domain/calls/do-not-call';
import { recordWorkspaceAudit } from '../../domain/audit/audit-log';
import { joinTransfer, requestTransfer } from '../../domain/calls/temporal';
import { transferLegStreamKey } from '../../contracts/calls';
import { CONVERSATION_CANCELED_REASON } from '../../contracts/conversation';
import { CallRecording } from '../audio/recording';
import type { LanguageModel } from '../../providers/llm/types';
import type { EmbeddingsConfig } from '../../config/env';
import type { Transcriber } from '../../providers/stt/types';
import type { Synthesizer } from '../../providers/tts/types';
import { runHttpTool } from '../../providers/http-tools/http-tool';
import { withDefaultVoice } from '../../providers/tts/default-voice';
import { GreetingAudio, prepareGreeting, type GreetingCache } from './greetings';
import { storedSharedWelcome, takePreparedWelcome, welcomeIsPersonal, welcomeKeyOf } from '../../domain/calls/prepared-welcome';
import { Conversation, type ConversationAgent, type ConversationEvent, type ConversationResult } from './engine';
import type { CallAudioStream } from './audio-stream';
import type { StreamRegistry } from './stream-registry';
import { conversationTelemetry } from '../telemetry';
import type { AnsweredBy, VoicemailDeps } from './voicemail';

export interface ConversationSessionDeps {
  temporal: Client;
  /** Where a warm transfer's second leg arrives on this node. */
  legStreams: StreamRegistry;
  languageModelFor(provider: string): LanguageModel;
  transcriber: Transcriber;
  synthesizer: Synthesizer;
  toolsAllowPrivateNetworks: boolean;
  /** Knowledge retrieval's embeddings endpoint (Config.embeddings); null ranks by BM25 alone. */
  embeddings: EmbeddingsConfig | null;
  /** The node's welcomes (./greetings.ts); null: welcomes are not prepared (Config.preparedGreetings off). */
  greetings?: GreetingCache | null;
}

/** What the call's workflow gives the conversation once its activity claims it (docs/decisions/0165). */
export interface SessionAttachment {
  workspaceId: string;
  sequenceBase: number;
  capSeconds: number;
  capReason: string;
}

/** How the conversation ended, with what the activity saves and reports. */
export interface SessionEnd {
  result: ConversationResult;
  /** Both sides of the call, when the agent records calls. */
  recording: CallRecording | null;
  /** Every event of the conversation is on the timeline (or given up after retries). */
  eventsWritten: Promise<void>;
}

const KNOWLEDGE_PASSAGES = 3;
/** A warm transfer's second leg connects its stream within a second or two of its answer. */
const TRANSFER_LEG_STREAM_WAIT_MS = 15_000;

/**
 * One call's conversation on this media node, started the moment the call's audio stream arrives
 * (docs/decisions/0165), so that the callee hears the welcome without waiting for the call's
 * workflow to schedule its conversation activity. The activity (./activity.ts), once it runs,
 * claims the session: it gives the call's cap and the events' sequence base, heartbeats for it,
 * relays its cancellation and reports its outcome.
 *
 * Until it is claimed the session writes nothing: its events wait, numbered, and go on the
 * timeline after `call.started` (which the workflow writes before scheduling the activity). A
 * session nobody claims is closed by the registry that keeps it, and its stream with it: the
 * provider then ends the call.
 */
export class ConversationSession {
  /** Epoch ms the stream arrived: the agent is live from here (billing rule 2). */
  readonly liveSince: number;
  readonly ended: Promise<SessionEnd>;
  private readonly abort = new AbortController();
  private readonly attachment: Promise<SessionAttachment>;
  private attach!: (attachment: SessionAttachment) => void;
  private conversation: Conversation | null = null;
  private eventCount = 0;
  private over = false;

  constructor(
    readonly callId: string,
    private readonly audio: CallAudioStream,
    private readonly deps: ConversationSessionDeps,
    /** The call's agent as the stream's token named it (0244): read beside the call, used once the call confirms it. */
    private readonly named: { agentId: string | null } = { agentId: null },
    now: () => number = Date.now,
  ) {
    this.liveSince = now();
    this.attachment = new Promise((resolve) => (this.attach = resolve));
    this.ended = this.run();
    // Nobody may be waiting yet: a failure is reported to whoever claims the session.
    this.ended.then(
      () => (this.over = true),
      () => (this.over = true),
    );
  }

  /** Events emitted so far: the next one's sequence is the base plus this. */
  get eventsEmitted(): number {
    return this.eventCount;
  }

  /** The call's workflow has the conversation now: its cap applies, and the events may be written. */
  claim(attachment: SessionAttachment, signal: AbortSignal): void {
    this.conversation?.limitTo(attachment.capSeconds, attachment.capReason);
    this.attach(attachment);
    if (signal.aborted) this.cancel();
    else signal.addEventListener('abort', () => this.cancel(), { once: true });
  }

  /** Ends the conversation from our side (the call is over, or nobody claimed it); its stream closes when it has ended. */
  cancel(): void {
    this.abort.abort(new Error(CONVERSATION_CANCELED_REASON));
  }

  /** Claimable: a session kept unclaimed past its time, or on a node shutting down, is canceled and its stream closed. */
  close(): void {
    this.cancel();
    this.audio.close();
  }

  /** Claimable: an ended conversation stays claimable, since its outcome is what the call is charged for. */
  onClose(): void {}

  /** Claimable: an ended conversation is kept longer for its claim (docs/decisions/0238). */
  hasEnded(): boolean {
    return this.over;
  }

  private async run(): Promise<SessionEnd> {
    const { deps, callId } = this;
    // The call and its agent at once when the token named the agent (0244): on a node saturated by
    // a burst each read waits its turn, and the callee hears nothing until both are in.
    const [call, namedAgent] = await Promise.all([
      Call.findById(callId, {
        user_data: 1,
        workspace_id: 1,
        direction: 1,
        agent_id: 1,
        to_number: 1,
        from_number: 1,
        data_storage: 1,
      }).lean(),
      this.named.agentId ? Agent.findById(this.named.agentId).lean<StoredAgent>() : null,
    ]);
    // The call's own agent, whatever a token names.
    const agentDoc = !call ? null : namedAgent?._id === call.agent_id ? namedAgent : await Agent.findById(call.agent_id).lean<StoredAgent>();
    if (!call || !agentDoc || agentDoc.workspace_id !== call.workspace_id) {
      this.audio.close();
      throw new Error('the call or its agent is gone');
    }
    // The recognizer's model follows the provider from the catalog, also for an agent stored
    // with an older catalog's model (0180): the provider refuses a model it does not know.
    const transcriber = { ...agentDoc.transcriber, model: transcriberModelFor(agentDoc.transcriber.provider) };
    const agent: ConversationAgent = { ...agentDoc, transcriber, tools: agentDoc.tools.map(toolOf) };
    const workspaceId = call.workspace_id;
    const dataStorage = dataStorageOf(call.data_storage);
    // An agent without a voice speaks with the server's default for its language.
    const synthesizer = agent.voice.voice_id ? deps.synthesizer : withDefaultVoice(deps.synthesizer, agent.voice.language);
    const signal = this.abort.signal;
    const userData = (call.user_data ?? {}) as Record<string, unknown>;
    // The welcome's audio starts now, alongside the conversation's own start (docs/decisions/0221).
    const welcomeKey = welcomeKeyOf(agentDoc, userData);
    const welcomeText = welcomeKey?.text ?? '';
    let greeting: GreetingAudio | null = null;
    if (deps.greetings && welcomeKey) {
      // A welcome with the callee's own values was synthesized while the phone rang (0228), when the speech server was quicker than the callee.
      const personal = welcomeIsPersonal(agentDoc.welcome_message);
      const prepared = personal ? await takePreparedWelcome(callId, welcomeKey).catch(() => null) : null;
      // One the same for every call, new to this node: stored by the worker that dialled a call of it (0233), read instead of synthesized.
      const shared = !personal && !deps.greetings.holds(welcomeKey) ? await storedSharedWelcome(welcomeKey).catch(() => null) : null;
      if (shared) deps.greetings.set(welcomeKey, GreetingAudio.whole([shared]));
      greeting = prepared ? GreetingAudio.whole([prepared], true) : prepareGreeting(deps.greetings, synthesizer, welcomeKey, signal);
    }

    // Events wait for the claim, then go on the timeline in order, off the audio path; a failed
    // write is retried, since losing an event is not allowed.
    let events: Promise<void> = this.attachment.then(() => undefined);
    // Live calls, voice-to-voice and greeting latencies, turn spans (media/telemetry.ts).
    const telemetry = conversationTelemetry();
    const emit = (event: ConversationEvent) => {
      telemetry.event(event);
      const index = this.eventCount++;
      const createdAt = new Date().toISOString();
      // What ended the call goes to the node's log too, where the operator who owns the server settings looks.
      if (event.level === 'error') console.error(`call ${callId}: ${event.type}: ${event.message}`);
      events = events.then(async () => {
        const { sequenceBase } = await this.attachment;
        const entry = {
          workspaceId,
          callId,
          agentId: call.agent_id,
          sequence: sequenceBase + index,
          type: event.type,
          message: event.message,
          level: event.level,
          latencyMs: event.latencyMs,
          data: event.data ?? {},
          createdAt,
          agentWebhookUrl: agentDoc.webhook_url ?? null,
          dataStorage,
        };
        await saveWithRetry(() => recordEvent(entry, { temporal: deps.temporal, now: () => new Date() }), 'a call event could not be recorded');
      });
    };

    // `call.record`: both sides, placed on the conversation's timeline as the engine hears and plays them.
    // Only `everything` keeps a recording (docs/decisions/0213): the others never make one.
    const recording = agent.call.record && keepsRecording(dataStorage) ? new CallRecording() : null;
    // Until the workflow gives the cap (from the balance), the agent's own limit holds.
    const conversation = new Conversation(
      {
        agent,
        userData,
        capSeconds: agent.call.max_duration_seconds,
        capReason: 'max duration reached',
        signal,
      },
      {
        audio: this.audio,
        transcriber: deps.transcriber,
        languageModel: deps.languageModelFor(agent.llm.provider),
        synthesizer,
        runTool: (tool, args, toolSignal) => runHttpTool(tool, args, { allowPrivateNetworks: deps.toolsAllowPrivateNetworks, signal: toolSignal }),
        retrieve: async (query) =>
          (await retrieve({ workspaceId, knowledgeBaseIds: agent.knowledge_base_ids, query, limit: KNOWLEDGE_PASSAGES, embeddings: deps.embeddings })).map(
            (chunk) => chunk.text,
          ),
        emit,
        now: () => Date.now(),
        welcomeAudio: (text) => (greeting && text === welcomeText ? greeting : null),
        onSpeculation: (outcome) => telemetry.speculation(outcome),
        // `transfer_call`: the call's workflow drives the provider (docs/decisions/0160).
        transfer: (request) => requestTransfer(deps.temporal, callId, request),
        // Warm: the second leg's stream arrives on this node under its own key (docs/decisions/0161).
        transferLeg: () => deps.legStreams.waitFor(transferLegStreamKey(callId), { signal, timeoutMs: TRANSFER_LEG_STREAM_WAIT_MS }),
        joinTransfer: (request) => joinTransfer(deps.temporal, callId, request),
        // `add_to_do_not_call` (docs/decisions/0206): the other party's number (the callee of an outbound call, the caller of an inbound one).
        ...(optOutNumberOf(call) ? { optOut: () => optOutOf(workspaceId, callId, optOutNumberOf(call)!) } : {}),
        ...(recording ? recordingHooks(recording) : {}),
        // Outbound phone calls of an agent that detects voicemail are screened (docs/decisions/0158).
        ...(call.direction === 'outbound' && agent.call.voicemail?.detect ? { voicemail: voicemailDeps(callId) } : {}),
      },
    );
    this.conversation = conversation;
    const result = await telemetry.around(() => conversation.run());
    this.audio.close();
    return { result, recording, eventsWritten: events };
  }
}

/** The number a caller's opt-out lists: a phone call's other party; none for a browser call. */
function optOutNumberOf(call: { direction: string; to_number?: string | null; from_number?: string | null }): string | null {
  if (call.direction === 'outbound') return call.to_number ?? null;
  if (call.direction === 'inbound') return call.from_number ?? null;
  return null;
}

/** Lists the number (source `opt_out`, added by the call) and records it in the audit log, as a person's add is. */
async function optOutOf(workspaceId: string, callId: string, number: string): Promise<{ number: string }> {
  const at = new Date();
  const { added } = await addToDoNotCallList({
    workspaceId,
    number,
    reason: 'the caller asked not to be called again',
    source: 'opt_out',
    addedBy: `call:${callId}`,
    callId,
    at,
  });
  if (added) {
    await saveWithRetry(
      () =>
        recordWorkspaceAudit(workspaceId, {
          action: 'do_not_call.added',
          actor: { type: 'anonymous', id: null, name: `caller (call ${callId})` },
          target: { type: 'do_not_call', id: null, name: number },
          at,
          details: { source: 'opt_out', call_id: callId },
        }),
      'the audit event of an opt-out could not be recorded',
    );
  }
  return { number };
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

/** Retries a write for a while (up to about 15 s of database trouble), then logs that it is lost; never throws. */
export async function saveWithRetry(write: () => Promise<unknown>, lost: string): Promise<void> {
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
      await saveWithRetry(
        () => Call.updateOne({ _id: callId }, { $set: { answered_by: 'machine', updated_at: new Date() } }),
        'answered_by of a call could not be saved',
      );
    },
  };
}
