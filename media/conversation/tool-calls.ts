import type { LlmTool, LlmToolCall } from '../../providers/llm/types';
import type { ConversationContext } from './context';
import type { KeypadDigits } from './keypad-digits';
import { OPT_OUT_TOOL, OPT_OUT_TOOL_NAME, OPTED_OUT_REASON, optOutMessageOf, optsOut } from './opt-out';
import { PRESS_DIGITS } from './keypad';
import type { Reply } from './state';
import { TRANSFER_TOOL_NAME } from './transfer';
import type { TransferCall } from './transfer-call';
import { fillVariables } from '../../domain/agents/variables';

/** What the model reads, and `tool.result` says, for a tool request stopped by barge-in. */
export const TOOL_CANCELED = 'canceled: the caller interrupted before the answer arrived';

export const END_CALL_TOOL: LlmTool = {
  name: 'end_call',
  description: 'End the call. Use it when the conversation is over: the caller said goodbye, or there is nothing more to do.',
  parameters: { type: 'object', properties: {}, additionalProperties: false },
};

/** How one model message's tool calls left the turn. */
export interface ToolRound {
  /** `end_call` was called: the goodbye, then the end. */
  endCall: boolean;
  /** `transfer_call` handed the call over: the conversation ends. */
  handedOver: boolean;
  /** `add_to_do_not_call` listed the number: the confirmation, then the end. */
  optedOut: boolean;
  /** The caller interrupted: the calls not yet run were answered `not run`, and the turn stops. */
  interrupted: boolean;
}

/**
 * The tools of a conversation: what the model is offered (the agent's HTTP tools, `end_call`,
 * and the built-ins its settings turn on), and running one model message's tool calls in order,
 * each answered in the model's history (`tool.call`, then `tool.result`, on the timeline).
 */
export class ToolCalls {
  constructor(
    private readonly ctx: ConversationContext,
    private readonly keypad: KeypadDigits,
    private readonly transfer: TransferCall,
  ) {}

  /** The tools the model is offered. */
  offered(): LlmTool[] {
    const { agent } = this.ctx.options;
    const tools = [...agent.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })), END_CALL_TOOL];
    if (this.keypad.tool) tools.push(this.keypad.tool);
    if (this.transfer.tool) tools.push(this.transfer.tool);
    if (this.offersOptOut()) tools.push(OPT_OUT_TOOL);
    return tools;
  }

  /** Runs the tool calls of one model message, in order, once the caller has heard its text. */
  async run(toolCalls: LlmToolCall[], reply: Reply, turnEndedAtMs: number): Promise<ToolRound> {
    const { history } = this.ctx.state;
    const round: ToolRound = { endCall: false, handedOver: false, optedOut: false, interrupted: false };
    for (const [index, call] of toolCalls.entries()) {
      if (reply.abort.signal.aborted) {
        // Interrupted: the rest never run, yet each call of the message needs its answer.
        for (const skipped of toolCalls.slice(index)) history.push({ role: 'tool', tool_call_id: skipped.id, content: 'not run: the caller interrupted' });
        return { ...round, interrupted: true };
      }
      if (call.name === PRESS_DIGITS && this.keypad.tool) {
        await this.keypad.press(call, reply);
        continue;
      }
      if (call.name === TRANSFER_TOOL_NAME && this.transfer.tool) {
        round.handedOver = await this.transfer.run(call, reply, turnEndedAtMs);
        if (round.handedOver) break;
        continue;
      }
      if (call.name === OPT_OUT_TOOL_NAME && this.offersOptOut()) {
        round.optedOut = (await this.optOut(call)) || round.optedOut;
        continue;
      }
      if (call.name === 'end_call') {
        this.ctx.deps.emit({ type: 'tool.call', message: 'end_call', level: 'info', latencyMs: null, data: { name: 'end_call' } });
        history.push({ role: 'tool', tool_call_id: call.id, content: 'the call ends' });
        round.endCall = true;
        continue;
      }
      await this.callTool(call, reply, turnEndedAtMs);
    }
    return round;
  }

  /** After an opt-out: the confirmation plays to the end (the caller may not talk it away), then the call ends. */
  async confirmOptOutAndEnd(): Promise<void> {
    const { options, state, speech } = this.ctx;
    state.goodbye = true;
    const reply = speech.start(false);
    const saying = speech.queue(reply, null);
    saying.say(optOutMessageOf(options.agent.call, options.agent.voice.language));
    await saying.finished();
    speech.end(reply);
    await speech.untilFarEndPlayed(reply);
    state.end('agent', OPTED_OUT_REASON, 'info');
  }

  /** An agent's HTTP tool (or a name the agent has none of, which the model is told). */
  private async callTool(call: LlmToolCall, reply: Reply, turnEndedAtMs: number): Promise<void> {
    const { options, deps, state, speech } = this.ctx;
    const tool = options.agent.tools.find((t) => t.name === call.name);
    let args: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(call.arguments || '{}');
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) args = parsed as Record<string, unknown>;
    } catch {
      // The model wrote broken JSON: the tool runs without arguments and its answer tells the model.
    }
    deps.emit({ type: 'tool.call', message: call.name, level: 'info', latencyMs: null, data: { name: call.name, args, url: tool?.url ?? '' } });
    if (!tool) {
      const result = `no tool named ${call.name}`;
      deps.emit({ type: 'tool.result', message: result, level: 'warning', latencyMs: 0, data: { name: call.name, status: 0, result } });
      state.history.push({ role: 'tool', tool_call_id: call.id, content: result });
      return;
    }
    // The pre-call message plays while the request runs; when it is the reply's first audio,
    // it is the one `tts.first_audio` reports (the caller hears the agent from then on).
    const saying = tool.pre_call_message ? speech.queue(reply, turnEndedAtMs) : null;
    saying?.say(fillVariables(tool.pre_call_message, options.userData));
    // Barge-in aborts the reply's signal, which stops the request under way: the caller moved on.
    const run = await deps.runTool(tool, args, reply.abort.signal);
    await saying?.finished();
    if (run.error?.kind === 'canceled') {
      const result = TOOL_CANCELED;
      // The contract: warning unless the status is 2xx (status 0: no answer arrived).
      deps.emit({
        type: 'tool.result',
        message: `${call.name}: canceled`,
        level: 'warning',
        latencyMs: run.latency_ms,
        data: { name: call.name, status: 0, result },
      });
      state.history.push({ role: 'tool', tool_call_id: call.id, content: result });
      return;
    }
    const status = run.status ?? 0;
    const result = run.error && run.status === null ? `the tool did not answer (${run.error.kind}: ${run.error.message})` : run.result;
    deps.emit({
      type: 'tool.result',
      message: `${call.name}: ${status}`,
      level: run.ok ? 'info' : 'warning',
      latencyMs: run.latency_ms,
      data: { name: call.name, status, result },
    });
    state.history.push({ role: 'tool', tool_call_id: call.id, content: result });
  }

  private offersOptOut(): boolean {
    return optsOut(this.ctx.options.agent.call) && this.ctx.deps.optOut !== undefined;
  }

  /**
   * The built-in `add_to_do_not_call` (docs/decisions/0206): the caller's number goes on the
   * do-not-call list (`tool.call`, `tool.result`, then `call.opted_out`). True when it is listed;
   * a failure is told to the model, and the call goes on.
   */
  private async optOut(call: LlmToolCall): Promise<boolean> {
    const { deps, state } = this.ctx;
    deps.emit({ type: 'tool.call', message: OPT_OUT_TOOL_NAME, level: 'info', latencyMs: null, data: { name: OPT_OUT_TOOL_NAME, args: {}, url: '' } });
    const startedAt = deps.now();
    try {
      const { number } = await deps.optOut!();
      const result = 'the number is on the do-not-call list; the call ends after the confirmation';
      deps.emit({
        type: 'tool.result',
        message: `${OPT_OUT_TOOL_NAME}: 200`,
        level: 'info',
        latencyMs: deps.now() - startedAt,
        data: { name: OPT_OUT_TOOL_NAME, status: 200, result },
      });
      state.history.push({ role: 'tool', tool_call_id: call.id, content: result });
      deps.emit({
        type: 'call.opted_out',
        message: `the caller asked not to be called again: ${number} is on the do-not-call list`,
        level: 'info',
        latencyMs: null,
        data: { number, source: 'opt_out' },
      });
      return true;
    } catch (error) {
      const result = `the number could not be listed: ${error instanceof Error ? error.message : String(error)}`;
      deps.emit({
        type: 'tool.result',
        message: `${OPT_OUT_TOOL_NAME}: 0`,
        level: 'warning',
        latencyMs: deps.now() - startedAt,
        data: { name: OPT_OUT_TOOL_NAME, status: 0, result },
      });
      state.history.push({ role: 'tool', tool_call_id: call.id, content: result });
      return false;
    }
  }
}
