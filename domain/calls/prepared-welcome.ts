import { createHash } from 'node:crypto';
import { Agent, type StoredAgent } from '../../db/models/agent';
import { Call } from '../../db/models/call';
import { PreparedWelcome } from '../../db/models/prepared-welcome';
import { withDefaultVoice } from '../../providers/tts/default-voice';
import { synthesizeMulaw } from '../../providers/tts/telephone-audio';
import type { Synthesizer } from '../../providers/tts/types';
import { fillVariables, templateVariables } from '../agents/variables';

/**
 * A welcome with the call's own `{variables}` synthesized while its phone rings (issue 32,
 * docs/decisions/0228). A welcome the same for every call is kept by each media node per agent
 * version and voice (0221); one with the callee's name is new for every call, and without this
 * the callee waited, after their stream opened, for the speech server's first byte. The call's
 * worker synthesizes it when the call is about to be dialled and stores it by call id; the
 * media node that takes the stream plays it if it says what the node would say (same agent
 * version, voice and text), and deletes it. What nobody took is deleted within minutes.
 */

/** How long an untaken welcome (a call never answered) may stay: a ring, the pace's wait, and some. */
export const PREPARED_WELCOME_KEPT_MS = 10 * 60_000;

/** What makes a welcome sound as it does: the agent's version, its voice, and the filled-in text. */
export interface WelcomeKey {
  agentId: string;
  agentVersion: number;
  voice: { provider: string; model: string; voice: string; speed: number; language: string };
  text: string;
}

/** The key of `agent`'s welcome for a call with `userData`; null when the agent has none. */
export function welcomeKeyOf(agent: Pick<StoredAgent, '_id' | 'version' | 'voice' | 'welcome_message'>, userData: Record<string, unknown>): WelcomeKey | null {
  if (!agent.welcome_message) return null;
  const text = fillVariables(agent.welcome_message, userData);
  if (!text) return null;
  const { voice } = agent;
  return {
    agentId: agent._id,
    agentVersion: agent.version,
    voice: { provider: voice.provider, model: voice.model, voice: voice.voice_id ?? '', speed: voice.speed, language: voice.language },
    text,
  };
}

/** True when the welcome has `{variables}`: each call's is its own (a node's cache of welcomes does not help). */
export function welcomeIsPersonal(welcomeMessage: string): boolean {
  return templateVariables(welcomeMessage, '').length > 0;
}

/** The key as one string: equal for welcomes that sound the same (a media node's cache of welcomes is keyed by it). */
export function welcomeKeyText(key: WelcomeKey): string {
  const { voice } = key;
  return JSON.stringify([key.agentId, key.agentVersion, voice.provider, voice.model, voice.voice, voice.speed, voice.language, key.text]);
}

/** The key as stored: a hash, so that the stored record does not repeat the callee's values as text. */
export function welcomeKeyHash(key: WelcomeKey): string {
  return createHash('sha256').update(welcomeKeyText(key)).digest('hex');
}

/**
 * Synthesizes the call's welcome and stores it, when its agent's welcome has `{variables}`
 * (others are served from the media nodes' caches). Called as the call is about to be dialled;
 * the caller does not wait for it (a failure only means the node synthesizes it, as before).
 * Also deletes what earlier calls left untaken.
 */
export async function prepareWelcomeWhileRinging(callId: string, agentId: string, synthesizer: Synthesizer, now: Date): Promise<'prepared' | 'not personal'> {
  // The agent first: most welcomes are the same for every call, and then nothing more is read or written here.
  const agent = await Agent.findById(agentId, { version: 1, voice: 1, welcome_message: 1, workspace_id: 1 }).lean<StoredAgent>();
  if (!agent || !welcomeIsPersonal(agent.welcome_message)) return 'not personal';
  const call = await Call.findById(callId, { workspace_id: 1, user_data: 1 }).lean();
  if (!call || agent.workspace_id !== call.workspace_id) return 'not personal';
  void PreparedWelcome.deleteMany({ created_at: { $lt: new Date(now.getTime() - PREPARED_WELCOME_KEPT_MS) } }).catch(() => undefined);
  const key = welcomeKeyOf(agent, (call.user_data ?? {}) as Record<string, unknown>);
  if (!key) return 'not personal';
  // The same voice the node would use: an agent without one speaks with the server's default for its language.
  const speech = key.voice.voice ? synthesizer : withDefaultVoice(synthesizer, key.voice.language);
  const { text, voice } = key;
  const pieces: Buffer[] = [];
  for await (const mulaw of synthesizeMulaw(speech, { text, voice: voice.voice, model: voice.model, speed: voice.speed, language: voice.language }))
    pieces.push(mulaw);
  await PreparedWelcome.updateOne(
    { _id: callId },
    { $set: { workspace_id: call.workspace_id, key_hash: welcomeKeyHash(key), audio: Buffer.concat(pieces), created_at: now } },
    { upsert: true },
  );
  return 'prepared';
}

/**
 * The media node's side: the call's welcome as prepared while it rang, when it says exactly
 * `key` (else null: the agent changed since, or none was prepared yet). Taken once: deleted.
 */
export async function takePreparedWelcome(callId: string, key: WelcomeKey): Promise<Buffer | null> {
  // Hydrated, not lean: lean answers the bytes as a BSON Binary.
  const prepared = await PreparedWelcome.findOneAndDelete({ _id: callId });
  if (!prepared || prepared.key_hash !== welcomeKeyHash(key)) return null;
  return Buffer.from(prepared.audio);
}

/** Deletes a call's prepared welcome, if any (an erasure). */
export async function discardPreparedWelcome(callId: string): Promise<void> {
  await PreparedWelcome.deleteOne({ _id: callId });
}
