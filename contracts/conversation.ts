/**
 * The live conversation activity (`runConversation`, task queue `media`) as the call
 * workflow sees it. Importing this pulls in no media code.
 */

/** Conversation events take sequence numbers from here up; the call's later events from CONVERSATION_SEQUENCE_END. */
export const CONVERSATION_SEQUENCE_START = 1_000;
/** A conversation emits far fewer events than this (an hour of turns is a few thousand). */
export const CONVERSATION_SEQUENCE_END = 1_000_000;

/** The conversation's reason when it was canceled from outside (the workflow ended the call). */
export const CONVERSATION_CANCELED_REASON = 'canceled';

export interface ConversationInput {
  callId: string;
  workspaceId: string;
  agentId: string;
  sequenceBase: number;
  capSeconds: number;
  capReason: string;
  /** How long to wait for the call's audio stream: a provider connects in a second or two; a browser page may take up to its token's life. */
  streamWaitSeconds: number;
  /**
   * The API already sent the call's audio to this node (docs/decisions/0165): no need to tell
   * the call's workflow where the conversation waits. Absent: announce the node (browser calls,
   * histories from before).
   */
  nodeChosen?: boolean;
}

export interface ConversationUsage {
  stt_seconds: number;
  tts_characters: number;
  llm_input_tokens: number;
  llm_output_tokens: number;
  llm_calls: number;
}

export interface ConversationOutcome {
  endedBy: string;
  reason: string;
  level: 'info' | 'warning' | 'error';
  /** ISO: the agent went live, and the conversation ended. */
  startedAt: string;
  endedAt: string;
  usage: ConversationUsage;
  avgFirstAudioMs: number | null;
  nextSequence: number;
  /** An answering machine answered (reason `voicemail`): what the agent did (docs/decisions/0159); absent otherwise. */
  voicemailAction?: 'hang_up' | 'leave_message';
}

/** Heartbeat details: where the conversation is; `at` (epoch ms) bounds the time charged if the node dies. */
export interface ConversationProgress {
  phase: 'waiting-for-stream' | 'live' | 'ending';
  at: number;
  /** Epoch ms the call's stream arrived (the agent went live); null before. */
  liveSince: number | null;
  nextSequence: number;
}

/** The media service's activities, as the call workflow calls them (media/conversation/activity.ts). */
export interface ConversationActivities {
  runConversation(input: ConversationInput): Promise<ConversationOutcome>;
}
