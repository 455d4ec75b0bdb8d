import type { JoinTransferRequest, TransferRequest, TransferResult } from '../../contracts/calls';
import { synthesizeMulaw } from '../../providers/tts/telephone-audio';
import type { LlmTool, LlmToolCall } from '../../providers/llm/types';
import { askModel, type ConversationContext } from './context';
import { parseArguments, sleep } from './helpers';
import { FAR_END_PLAYED_WAIT_MS } from './speech';
import type { Reply } from './state';
import { TRANSFER_TOOL_NAME, transferOf, transferSettingsOf, transferTool } from './transfer';
import { fillVariables } from '../../domain/agents/variables';

/** Said to the caller before a warm transfer when the agent has no `handover_message`. */
export const WARM_HANDOVER_LINE = 'Please hold while I connect you to a colleague.';
/** The briefing of a warm transfer's person (docs/decisions/0161); the simulated model knows it by "brief a colleague". */
const TRANSFER_BRIEFING_PROMPT =
  'You brief a colleague who is taking over a phone call. In one or two short sentences, tell them who is calling and what they need, from the conversation below. Speak to the colleague directly.';

/** The built-in `transfer_call` run in a conversation (docs/decisions/0160, 0161; the tool itself: ./transfer.ts). */
export class TransferCall {
  constructor(private readonly ctx: ConversationContext) {}

  /** `transfer_call`, when the agent has destinations; null otherwise. */
  get tool(): LlmTool | null {
    return transferTool(transferSettingsOf(this.ctx.options.agent.call));
  }

  /**
   * `transfer_call` (docs/decisions/0160): the handover message plays to the end, then
   * `call.transfer_started`, and the call's workflow hands the call over. True when it did (the
   * conversation ends: the stream closes as the provider re-points the call); false when it
   * failed, which the model is told (and `call.transfer_failed` says), and the call goes on.
   */
  async run(call: LlmToolCall, reply: Reply, turnEndedAtMs: number): Promise<boolean> {
    const { options, deps, state, speech } = this.ctx;
    const settings = transferSettingsOf(options.agent.call);
    const args = parseArguments(call.arguments);
    deps.emit({ type: 'tool.call', message: TRANSFER_TOOL_NAME, level: 'info', latencyMs: null, data: { name: TRANSFER_TOOL_NAME, args, url: '' } });
    const startedAt = deps.now();
    const chosen = transferOf(args, settings);
    const answer = (status: number, result: string) => {
      deps.emit({
        type: 'tool.result',
        message: `${TRANSFER_TOOL_NAME}: ${status}`,
        level: status === 200 ? 'info' : 'warning',
        latencyMs: deps.now() - startedAt,
        data: { name: TRANSFER_TOOL_NAME, status, result },
      });
      state.history.push({ role: 'tool', tool_call_id: call.id, content: result });
    };
    if ('problem' in chosen) {
      answer(0, chosen.problem);
      return false;
    }
    const { destination, reason } = chosen;
    // Caller turns while the call is handed over are kept, not answered.
    state.goodbye = true;
    const handover = fillVariables(settings.handover_message, options.userData) || (destination.mode === 'warm' ? WARM_HANDOVER_LINE : '');
    if (handover) {
      const saying = speech.queue(reply, turnEndedAtMs);
      saying.say(handover);
      await saying.finished();
      await speech.untilFarEndPlayed(reply);
    }
    if (state.ending) return false;
    deps.emit({
      type: 'call.transfer_started',
      message: `transferring to ${destination.number}`,
      level: 'info',
      latencyMs: null,
      data: { destination: destination.number, mode: destination.mode, reason },
    });
    state.transferring = true;
    const request: TransferRequest = {
      destination: destination.number,
      description: destination.description,
      mode: destination.mode,
      reason,
      ringTimeoutSeconds: settings.ring_timeout_seconds,
    };
    let result: TransferResult = deps.transfer
      ? await deps.transfer(request).catch((): TransferResult => ({ outcome: 'failed', reason: 'error' }))
      : { outcome: 'failed', reason: 'error' };
    let briefing = '';
    if (result.outcome === 'answered') {
      // Warm: a person took the second call; brief them, then join the two.
      const briefed = await this.briefTransferLeg(reason).catch((): null => null);
      briefing = briefed ?? '';
      result = await this.joinTransfer(
        briefed === null || state.ending !== null ? { join: false, reason: state.ending ? 'canceled' : 'error' } : { join: true },
      );
    }
    if (result.outcome === 'handed-over') {
      answer(200, briefing ? `transferred to ${destination.number} after briefing them: ${briefing}` : `transferred to ${destination.number}`);
      return true;
    }
    state.transferring = false;
    state.goodbye = false;
    const why = result.reason ?? 'error';
    deps.emit({
      type: 'call.transfer_failed',
      message: `the transfer to ${destination.number} failed: ${why}`,
      level: 'warning',
      latencyMs: null,
      data: { destination: destination.number, mode: destination.mode, reason: why },
    });
    answer(0, `the transfer failed (${why}): the caller is still with you; tell them`);
    return false;
  }

  private joinTransfer(request: JoinTransferRequest): Promise<TransferResult> {
    const { deps } = this.ctx;
    if (!deps.joinTransfer) return Promise.resolve({ outcome: 'failed', reason: 'error' });
    return deps.joinTransfer(request).catch((): TransferResult => ({ outcome: 'failed', reason: 'error' }));
  }

  /**
   * Warm: the person who answered hears a short summary of the call so far, from the language
   * model, on their own stream; answers it once played (null when their stream never came).
   */
  private async briefTransferLeg(reason: string): Promise<string | null> {
    const { options, deps, state } = this.ctx;
    if (!deps.transferLeg) return null;
    const leg = await deps.transferLeg();
    const { voice } = options.agent;
    const lines = state.transcript.map((t) => `${t.role === 'user' ? 'caller' : 'agent'}: ${t.text}`).join('\n');
    const answer = await askModel(
      this.ctx,
      120,
      TRANSFER_BRIEFING_PROMPT,
      `Reason for the transfer: ${reason || 'not given'}\n\nConversation so far:\n${lines}`,
    );
    const summary = answer.trim() || `A caller is being transferred to you: ${reason}`;
    let playMs = 0;
    state.usage.tts_characters += summary.length;
    for await (const mulaw of synthesizeMulaw(deps.synthesizer, {
      text: summary,
      voice: voice.voice_id ?? '',
      model: voice.model,
      speed: voice.speed,
      language: voice.language,
      signal: options.signal,
    })) {
      leg.play(mulaw);
      playMs += mulaw.length / 8;
    }
    let played = false;
    leg.onPlayed((name) => {
      if (name === 'briefed') played = true;
    });
    leg.mark('briefed');
    const deadline = deps.now() + playMs + FAR_END_PLAYED_WAIT_MS;
    while (!played && !state.ending && deps.now() < deadline) await sleep(20);
    return summary;
  }
}
