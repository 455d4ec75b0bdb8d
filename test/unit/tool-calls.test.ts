import { expect } from 'chai';
import type { LlmToolCall } from '../../providers/llm/types';
import { KeypadDigits } from '../../media/conversation/keypad-digits';
import { TOOL_CANCELED, ToolCalls } from '../../media/conversation/tool-calls';
import { TransferCall } from '../../media/conversation/transfer-call';
import { conversationContext, tool, toolRun } from '../support/conversation-context';

type Fixture = ReturnType<typeof conversationContext>;
const toolCalls = (t: Fixture) => new ToolCalls(t.ctx, new KeypadDigits(t.ctx), new TransferCall(t.ctx));
const call = (id: string, name: string, args: unknown = {}): LlmToolCall => ({ id, name, arguments: JSON.stringify(args) });

describe('tool calls of a conversation (media/conversation/tool-calls.ts)', () => {
  it("offers the agent's tools and end_call, and the built-ins only when the agent's settings and the call allow them", () => {
    const plain = conversationContext({ tools: [tool('lookup_order')] });
    expect(
      toolCalls(plain)
        .offered()
        .map((t) => t.name),
    ).to.deep.equal(['lookup_order', 'end_call']);
    const all = conversationContext({
      tools: [tool('lookup_order')],
      call: {
        keypad: { press_digits: true, caller_digits: false },
        opt_out: true,
        transfer: { destinations: [{ number: '+919800000001', description: 'sales', mode: 'cold' }], handover_message: '', ring_timeout_seconds: 30 },
      },
      deps: { optOut: async () => ({ number: '+919800000009' }) },
    });
    expect(
      toolCalls(all)
        .offered()
        .map((t) => t.name),
    ).to.deep.equal(['lookup_order', 'end_call', 'press_digits', 'transfer_call', 'add_to_do_not_call']);
  });

  it("runs an agent's tool with the model's arguments and answers its result; an unknown name is answered too", async () => {
    const asked: unknown[] = [];
    const t = conversationContext({
      tools: [tool('lookup_order')],
      deps: { runTool: async (_tool, args) => (asked.push(args), toolRun({ status: 200, result: '{"status":"shipped"}' })) },
    });
    const reply = t.ctx.speech.start(true);
    const round = await toolCalls(t).run([call('c1', 'lookup_order', { order: '42' }), call('c2', 'no_such_tool')], reply, Date.now());
    expect(round).to.deep.equal({ endCall: false, handedOver: false, optedOut: false, interrupted: false });
    expect(asked).to.deep.equal([{ order: '42' }]);
    expect(t.types()).to.deep.equal(['tool.call', 'tool.result', 'tool.call', 'tool.result']);
    expect(t.events[1]).to.deep.include({ message: 'lookup_order: 200', level: 'info' });
    expect(t.events[3]).to.deep.include({ message: 'no tool named no_such_tool', level: 'warning' });
    expect(t.ctx.state.history).to.deep.equal([
      { role: 'tool', tool_call_id: 'c1', content: '{"status":"shipped"}' },
      { role: 'tool', tool_call_id: 'c2', content: 'no tool named no_such_tool' },
    ]);
  });

  it('says a canceled request was canceled (the caller interrupted), with a warning', async () => {
    const t = conversationContext({
      tools: [tool('slow')],
      deps: { runTool: async () => toolRun({ ok: false, status: null, result: '', error: { kind: 'canceled', message: 'aborted' } }) },
    });
    await toolCalls(t).run([call('c1', 'slow')], t.ctx.speech.start(true), Date.now());
    expect(t.events[1]).to.deep.include({ type: 'tool.result', message: 'slow: canceled', level: 'warning' });
    expect(t.ctx.state.history).to.deep.equal([{ role: 'tool', tool_call_id: 'c1', content: TOOL_CANCELED }]);
  });

  it('end_call ends the round with endCall, and the calls after it still run', async () => {
    let runs = 0;
    const t = conversationContext({ tools: [tool('log')], deps: { runTool: async () => (runs++, toolRun({})) } });
    const round = await toolCalls(t).run([call('c1', 'end_call'), call('c2', 'log')], t.ctx.speech.start(true), Date.now());
    expect(round.endCall).to.equal(true);
    expect(runs).to.equal(1);
    expect(t.ctx.state.history[0]).to.deep.equal({ role: 'tool', tool_call_id: 'c1', content: 'the call ends' });
  });

  it('answers every call "not run" once the caller interrupted, and runs none', async () => {
    let runs = 0;
    const t = conversationContext({ tools: [tool('log')], deps: { runTool: async () => (runs++, toolRun({})) } });
    const reply = t.ctx.speech.start(true);
    reply.abort.abort();
    const round = await toolCalls(t).run([call('c1', 'log'), call('c2', 'end_call')], reply, Date.now());
    expect(round).to.deep.equal({ endCall: false, handedOver: false, optedOut: false, interrupted: true });
    expect(runs).to.equal(0);
    expect(t.events).to.deep.equal([]);
    expect(t.ctx.state.history.map((m) => m.content)).to.deep.equal(['not run: the caller interrupted', 'not run: the caller interrupted']);
  });

  it('add_to_do_not_call lists the number (call.opted_out) and ends the round; a failed listing is told to the model and the call goes on', async () => {
    const listed = conversationContext({ call: { opt_out: true }, deps: { optOut: async () => ({ number: '+919800000009' }) } });
    expect((await toolCalls(listed).run([call('c1', 'add_to_do_not_call')], listed.ctx.speech.start(true), Date.now())).optedOut).to.equal(true);
    expect(listed.types()).to.deep.equal(['tool.call', 'tool.result', 'call.opted_out']);
    expect(listed.events[2]!.data).to.deep.equal({ number: '+919800000009', source: 'opt_out' });

    const failing = conversationContext({ call: { opt_out: true }, deps: { optOut: () => Promise.reject(new Error('database down')) } });
    expect((await toolCalls(failing).run([call('c1', 'add_to_do_not_call')], failing.ctx.speech.start(true), Date.now())).optedOut).to.equal(false);
    expect(failing.types()).to.deep.equal(['tool.call', 'tool.result']);
    expect(failing.events[1]).to.deep.include({ message: 'add_to_do_not_call: 0', level: 'warning' });
    expect(failing.ctx.state.history[0]!.content).to.equal('the number could not be listed: database down');
  });

  it("add_to_do_not_call is an unknown tool when the call cannot opt out (no caller's number)", async () => {
    const t = conversationContext({ call: { opt_out: true } });
    const round = await toolCalls(t).run([call('c1', 'add_to_do_not_call')], t.ctx.speech.start(true), Date.now());
    expect(round.optedOut).to.equal(false);
    expect(t.ctx.state.history[0]!.content).to.equal('no tool named add_to_do_not_call');
  });

  it('after an opt-out, the confirmation is said to its end, then the call ends with "opted out"', async () => {
    const t = conversationContext({ call: { opt_out: true, opt_out_message: 'You will not be called again.' } });
    await toolCalls(t).confirmOptOutAndEnd();
    expect(t.played.length).to.be.greaterThan(0);
    expect(t.ctx.state.transcript.map((e) => e.text)).to.deep.equal(['You will not be called again.']);
    expect(t.ctx.state.ending).to.deep.equal({ by: 'agent', reason: 'opted out', level: 'info' });
  });
});
