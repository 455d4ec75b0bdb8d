import { expect } from 'chai';
import type { TransferRequest, TransferResult } from '../../contracts/calls';
import type { LlmToolCall } from '../../providers/llm/types';
import { TransferCall, WARM_HANDOVER_LINE } from '../../media/conversation/transfer-call';
import { conversationContext } from '../support/conversation-context';

const SALES = { number: '+919800000001', description: 'the sales desk', mode: 'cold' as const };
const transferring = (id: string, args: unknown): LlmToolCall => ({ id, name: 'transfer_call', arguments: JSON.stringify(args) });

/** A conversation whose workflow answers transfers with `result`, recording what it was asked. */
function withTransfer(result: TransferResult, settings: { handover_message?: string; mode?: 'cold' | 'warm' } = {}) {
  const asked: TransferRequest[] = [];
  const t = conversationContext({
    call: {
      transfer: { destinations: [{ ...SALES, mode: settings.mode ?? 'cold' }], handover_message: settings.handover_message ?? '', ring_timeout_seconds: 20 },
    },
    deps: { transfer: async (request) => (asked.push(request), result) },
  });
  return { ...t, asked, transfer: new TransferCall(t.ctx) };
}

describe('transfer_call in a conversation (media/conversation/transfer-call.ts)', () => {
  it('is offered only to an agent with destinations, which it names', () => {
    expect(new TransferCall(conversationContext().ctx).tool).to.equal(null);
    const { transfer } = withTransfer({ outcome: 'handed-over', reason: null });
    expect(transfer.tool!.parameters).to.have.nested.property('properties.destination.enum').that.deep.equals([SALES.number]);
  });

  it('a number that is no destination is told to the model, and nothing is transferred', async () => {
    const t = withTransfer({ outcome: 'handed-over', reason: null });
    expect(await t.transfer.run(transferring('c1', { destination: '+910000000000', reason: 'x' }), t.ctx.speech.start(true), Date.now())).to.equal(false);
    expect(t.asked).to.deep.equal([]);
    expect(t.types()).to.deep.equal(['tool.call', 'tool.result']);
    expect(t.ctx.state.history[0]!.content).to.equal(`not transferred: destination must be one of ${SALES.number}`);
    expect(t.ctx.state.goodbye).to.equal(false);
  });

  it('hands the call over (cold): call.transfer_started, the request to the workflow, then the answer; the conversation is transferring', async () => {
    const t = withTransfer({ outcome: 'handed-over', reason: null });
    const handed = await t.transfer.run(transferring('c1', { destination: SALES.number, reason: 'wants a quote' }), t.ctx.speech.start(true), Date.now());
    expect(handed).to.equal(true);
    expect(t.asked).to.deep.equal([
      { destination: SALES.number, description: SALES.description, mode: 'cold', reason: 'wants a quote', ringTimeoutSeconds: 20 },
    ]);
    expect(t.types()).to.deep.equal(['tool.call', 'call.transfer_started', 'tool.result']);
    expect(t.events[2]).to.deep.include({ message: 'transfer_call: 200', level: 'info' });
    expect(t.ctx.state).to.include({ transferring: true, goodbye: true });
    expect(t.played).to.deep.equal([]); // no handover message: nothing said
  });

  it('a failed transfer is told to the model and the caller: the call goes on, answered again', async () => {
    const t = withTransfer({ outcome: 'failed', reason: 'no-answer' });
    expect(await t.transfer.run(transferring('c1', { destination: SALES.number, reason: '' }), t.ctx.speech.start(true), Date.now())).to.equal(false);
    expect(t.types()).to.deep.equal(['tool.call', 'call.transfer_started', 'call.transfer_failed', 'tool.result']);
    expect(t.events[2]!.data).to.deep.equal({ destination: SALES.number, mode: 'cold', reason: 'no-answer' });
    expect(t.ctx.state).to.include({ transferring: false, goodbye: false });
    expect(t.ctx.state.history[0]!.content).to.equal('the transfer failed (no-answer): the caller is still with you; tell them');
  });

  it('says the handover message to its end before the transfer starts (a warm one without a message says the default line)', async () => {
    const t = withTransfer({ outcome: 'failed', reason: 'busy' }, { mode: 'warm' });
    let playedWhenAsked = -1;
    t.ctx.deps.transfer = async () => ((playedWhenAsked = t.played.length), { outcome: 'failed', reason: 'busy' });
    const reply = t.ctx.speech.start(true);
    await t.transfer.run(transferring('c1', { destination: SALES.number, reason: '' }), reply, Date.now());
    expect(playedWhenAsked).to.be.greaterThan(0);
    t.ctx.speech.end(reply);
    expect(t.ctx.state.transcript.map((e) => e.text)).to.deep.equal([WARM_HANDOVER_LINE]);
  });
});
