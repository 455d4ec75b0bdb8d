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
 * Synthesizes the call's welcome and stores it, when its agent's welcome has `{variables}`; a
 * welcome the same for every call is stored once per agent version and voice, for the media
 * nodes that have not played it yet (prepareSharedWelcome). Called as the call is about to be
 * dialled; the caller does not wait for it (a failure only means the node synthesizes it, as
 * before). Also deletes what earlier calls left untaken.
 */
export async function prepareWelcomeWhileRinging(
  callId: string,
  agentId: string,
  synthesizer: Synthesizer,
  now: Date,
): Promise<'prepared' | 'shared' | 'none'> {
  const agent = await Agent.findById(agentId, { version: 1, voice: 1, welcome_message: 1, workspace_id: 1 }).lean<StoredAgent>();
  if (!agent) return 'none';
  if (!welcomeIsPersonal(agent.welcome_message)) return prepareSharedWelcome(agent, synthesizer, now);
  const call = await Call.findById(callId, { workspace_id: 1, user_data: 1 }).lean();
  if (!call || agent.workspace_id !== call.workspace_id) return 'none';
  sweepUntakenWelcomes(now);
  const key = welcomeKeyOf(agent, (call.user_data ?? {}) as Record<string, unknown>);
  if (!key) return 'none';
  await PreparedWelcome.updateOne(
    { _id: callId },
    { $set: { workspace_id: call.workspace_id, key_hash: welcomeKeyHash(key), audio: await synthesizeWelcome(key, synthesizer), created_at: now } },
    { upsert: true },
  );
  return 'prepared';
}

/**
 * A welcome the same for every call (docs/decisions/0233): each media node keeps it in memory
 * once it has played it (0221), but a node's first calls of an agent version waited for the
 * speech server, and in a burst those were the longest silences. It is stored once, by id
 * `shared:<key hash>`, and kept alive while calls are dialled with it (deleted with the other
 * prepared welcomes once none has for PREPARED_WELCOME_KEPT_MS). It holds no caller's data:
 * only the agent's own words. Each worker looks at most every SHARED_WELCOME_CHECK_MS per welcome.
 */
async function prepareSharedWelcome(agent: StoredAgent, synthesizer: Synthesizer, now: Date): Promise<'shared' | 'none'> {
  const key = welcomeKeyOf(agent, {});
  if (!key) return 'none';
  const id = sharedWelcomeId(key);
  const checkedAt = sharedWelcomesChecked.get(id);
  if (checkedAt !== undefined && now.getTime() - checkedAt < SHARED_WELCOME_CHECK_MS) return 'shared';
  // Taken before the first await: the dials of a burst check once.
  noteSharedWelcomeChecked(id, now.getTime());
  try {
    // Still stored: kept alive. Else made now, for the nodes that have not played it.
    const { matchedCount } = await PreparedWelcome.updateOne({ _id: id }, { $set: { created_at: now } });
    if (matchedCount === 0) {
      sweepUntakenWelcomes(now);
      const audio = await synthesizeWelcome(key, synthesizer);
      await PreparedWelcome.updateOne(
        { _id: id },
        { $set: { workspace_id: agent.workspace_id, key_hash: welcomeKeyHash(key), audio, created_at: now } },
        { upsert: true },
      );
    }
    return 'shared';
  } catch (error) {
    sharedWelcomesChecked.delete(id);
    throw error;
  }
}

/** The stored id of a welcome the same for every call (the prepared welcomes of calls are by call id). */
export function sharedWelcomeId(key: WelcomeKey): string {
  return `shared:${welcomeKeyHash(key)}`;
}

/** How long a worker takes a shared welcome it stored or kept alive to be there still: well within PREPARED_WELCOME_KEPT_MS. */
const SHARED_WELCOME_CHECK_MS = 2 * 60_000;
/** The shared welcomes this worker stored or kept alive, by id, with when (epoch ms); bounded. */
const sharedWelcomesChecked = new Map<string, number>();
const SHARED_WELCOMES_REMEMBERED = 1_000;

function noteSharedWelcomeChecked(id: string, at: number): void {
  sharedWelcomesChecked.delete(id);
  sharedWelcomesChecked.set(id, at);
  for (const [oldest] of sharedWelcomesChecked) {
    if (sharedWelcomesChecked.size <= SHARED_WELCOMES_REMEMBERED) break;
    sharedWelcomesChecked.delete(oldest);
  }
}

function sweepUntakenWelcomes(now: Date): void {
  void PreparedWelcome.deleteMany({ created_at: { $lt: new Date(now.getTime() - PREPARED_WELCOME_KEPT_MS) } }).catch(() => undefined);
}

/** The welcome's whole audio (mu-law), in the voice the node would use: an agent without one speaks with the server's default for its language. */
async function synthesizeWelcome(key: WelcomeKey, synthesizer: Synthesizer): Promise<Buffer> {
  const speech = key.voice.voice ? synthesizer : withDefaultVoice(synthesizer, key.voice.language);
  const { text, voice } = key;
  const pieces: Buffer[] = [];
  for await (const mulaw of synthesizeMulaw(speech, { text, voice: voice.voice, model: voice.model, speed: voice.speed, language: voice.language }))
    pieces.push(mulaw);
  return Buffer.concat(pieces);
}

/** The media node's side: the stored welcome the same for every call, when it says exactly `key` (else null). Not taken: other nodes read it too. */
export async function storedSharedWelcome(key: WelcomeKey): Promise<Buffer | null> {
  // Hydrated, not lean: lean answers the bytes as a BSON Binary.
  const stored = await PreparedWelcome.findById(sharedWelcomeId(key));
  if (!stored || stored.key_hash !== welcomeKeyHash(key)) return null;
  return Buffer.from(stored.audio);
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
