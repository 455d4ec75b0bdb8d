import type { AgentSettings, AgentTool } from '../../db/models/agent';
import type { HttpToolRun } from '../../providers/http-tools/http-tool';
import type { LanguageModel } from '../../providers/llm/types';
import type { Transcriber } from '../../providers/stt/types';
import type { Synthesizer } from '../../providers/tts/types';
import type { CallAudioStream } from './audio-stream';
import type { VoicemailDeps } from './voicemail';
import type { JoinTransferRequest, TransferRequest, TransferResult } from '../../contracts/calls';
import type { ConversationUsage } from '../../contracts/conversation';
import type { GreetingAudio } from './greetings';

/** What a conversation (./engine.ts) is given and what it answers. */

/** A call's settings as the engine runs them: the agent's, with its tools. */
export type ConversationAgent = Pick<AgentSettings, 'welcome_message' | 'system_prompt' | 'llm' | 'voice' | 'transcriber' | 'call' | 'knowledge_base_ids'> & {
  tools: AgentTool[];
};

export type EventLevel = 'info' | 'warning' | 'error';

export interface ConversationEvent {
  type: string;
  message: string;
  level: EventLevel;
  latencyMs: number | null;
  data?: Record<string, unknown>;
}

/** What became of a speculative reply (./speculation.ts): `used` (its turn was confirmed as guessed) or `dropped`. */
export type SpeculationOutcome = 'used' | 'dropped';

export interface ConversationDeps {
  audio: CallAudioStream;
  transcriber: Transcriber;
  languageModel: LanguageModel;
  synthesizer: Synthesizer;
  runTool(tool: AgentTool, args: Record<string, unknown>, signal: AbortSignal): Promise<HttpToolRun>;
  /** Knowledge-base passages for the caller's turn (empty when the agent has no bases). */
  retrieve(query: string): Promise<string[]>;
  /** Records an event on the call's timeline; must not block (the engine does not wait for it). */
  emit(event: ConversationEvent): void;
  /** Agent audio as it is queued for playback, `atMs` on the call's timeline (for the recording). */
  onAgentAudio?(mulaw: Buffer, atMs: number): void;
  onCallerAudio?(mulaw: Buffer, atMs: number): void;
  /** Milliseconds, monotonic enough for latencies (Date.now() in production). */
  now(): number;
  /**
   * Voicemail screening (docs/decisions/0158): given for an outbound phone call whose agent has
   * `call.voicemail.detect` on, absent otherwise (no screening).
   */
  voicemail?: VoicemailDeps;
  /**
   * `transfer_call` (docs/decisions/0160): asks the call's workflow to transfer the call; answers
   * once it was handed over or failed. Absent: the tool fails with `error` (no telephony).
   */
  transfer?(request: TransferRequest): Promise<TransferResult>;
  /** Warm: the second leg's audio stream, once the person who answered is connected to this node. */
  transferLeg?(): Promise<CallAudioStream>;
  /** Warm: after the briefing, join the two legs (the agent leaves), or give up. */
  joinTransfer?(request: JoinTransferRequest): Promise<TransferResult>;
  /**
   * `add_to_do_not_call` (docs/decisions/0206): puts the caller's number on the workspace's
   * do-not-call list and answers it. Absent (a browser call has no number): the tool is not offered.
   */
  optOut?(): Promise<{ number: string }>;
  /**
   * The welcome's audio when it was prepared for this text (./greetings.ts, docs/decisions/0221):
   * played as it is, without asking the speech server; null: synthesized as any reply.
   */
  welcomeAudio?(text: string): GreetingAudio | null;
  /** What became of each speculative reply (./speculation.ts): for the node's metrics. */
  onSpeculation?(outcome: SpeculationOutcome): void;
}

export interface ConversationOptions {
  agent: ConversationAgent;
  userData: Record<string, unknown>;
  /** The call's length limit in seconds: `max_duration_seconds`, or less when the balance pays for less. */
  capSeconds: number;
  /** `hangup_reason` when the cap ends the call: `max duration reached` or `credits ran out`. */
  capReason: string;
  /** Cancels the conversation from outside (API hang-up, activity cancellation). */
  signal: AbortSignal;
}

export interface TranscriptEntry {
  role: 'assistant' | 'user';
  text: string;
  at: Date;
  interrupted: boolean;
}

export type { ConversationUsage };

export interface ConversationResult {
  /** `agent`, `caller` or `system`. */
  endedBy: string;
  reason: string;
  level: EventLevel;
  /** Epoch ms: the agent went live (the stream connected) and the conversation ended. */
  startedAtMs: number;
  endedAtMs: number;
  transcript: TranscriptEntry[];
  usage: ConversationUsage;
  /** Mean of the replies' first-audio latencies (the welcome left out); null without replies. */
  avgFirstAudioMs: number | null;
  /** Each spoken turn's voice-to-voice time on this node, in order (./turn-timing.ts, docs/decisions/0220). */
  voiceToVoiceMs: number[];
  /** A machine answered and the call ended on it (reason `voicemail`): the action taken; null otherwise. */
  voicemailAction: 'hang_up' | 'leave_message' | null;
}
