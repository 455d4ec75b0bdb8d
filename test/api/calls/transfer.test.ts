import { expect } from 'chai';
import { LedgerItem } from '../../../db/models/ledger-item';
import type { CalleeScript } from '../../../simulators/telephony/simulator';
import { withJson } from '../../support/accounts';
import { OPEN_HOURS, useCallStack } from '../../support/call-stack';
import { until } from '../../support/until';
import { onlyIssue } from '../agents/helpers';
import { contractCallCost } from '../../support/charges';

type Call = Record<string, unknown> & { id: string; status: string; duration_seconds: number; cost_paise: number; transfer: Record<string, unknown> | null };

/**
 * Transfer to a person (docs/decisions/0160, 0161), end to end: the API places the call, the
 * simulated caller asks for a person, the simulated model calls `transfer_call`, the call's
 * workflow transfers the call at the telephony simulator (Plivo's `POST Call/{uuid}/`): cold,
 * its `<Dial>` rings the destination's scripted callee and reports back through the signed
 * dial callbacks; warm, a second call to the destination streams to the same media node, is
 * briefed, and both legs meet in a `<Conference>`. Real API, workers, media service, database and Temporal.
 */
describe('Transfer to a person (transfer_call, cold and warm)', function () {
  this.timeout(120_000);
  const stack = useCallStack({ numberPrefix: '+9197' });
  const number = (script: CalleeScript): string => stack.callee(script);
  const { createAgent, simulated, timeline } = stack;
  const place = (agentId: string, to: string) => stack.place<Call>(agentId, to);
  const finished = (id: string) => stack.finished<Call>(id);

  it('cold: the handover line, call.transfer_started, the destination answers (call.transferred), hangup_reason transferred, live + bridged time charged in one item', async () => {
    // The destination answers after 2 s and talks 40 s (2 s of real time at this scale), then hangs up.
    const desk = number({ kind: 'answer', answerAfterSeconds: 2, hangUpAfterSeconds: 40 });
    const other = number({ kind: 'busy' });
    const agent = await createAgent({
      welcome_message: 'Hello, this is Asha.',
      call: {
        ...OPEN_HOURS,
        transfer: {
          destinations: [
            { number: other, description: 'Sales for new plans' },
            { number: desk, description: 'Billing and refunds' },
          ],
          handover_message: 'Connecting you to our billing desk now.',
        },
      },
    });
    const to = number({ kind: 'answer', answerAfterSeconds: 1, conversation: [{ say: 'This is ridiculous, I want a person for billing' }] });
    const placed = await place(agent.id, to);
    const { call, events } = await finished(placed.id);
    const types = events.map((e) => e.type);

    const transferPart = types.filter((t) =>
      [
        'user.turn',
        'agent.reply',
        'tool.call',
        'call.transfer_started',
        'tool.result',
        'call.transferred',
        'call.transfer_failed',
        'call.ended',
        'call.completed',
      ].includes(t),
    );
    expect(transferPart).to.deep.equal([
      'user.turn',
      'agent.reply',
      'tool.call',
      'call.transfer_started',
      'tool.result',
      'call.transferred',
      'call.ended',
      'call.completed',
    ]);
    const byType = (type: string) => events.find((e) => e.type === type)!;
    expect(byType('tool.call').data).to.deep.equal({
      name: 'transfer_call',
      args: { destination: desk, reason: 'This is ridiculous, I want a person for billing' },
      url: '',
    });
    expect(byType('call.transfer_started').data).to.deep.equal({ destination: desk, mode: 'cold', reason: 'This is ridiculous, I want a person for billing' });
    expect(byType('tool.result').data).to.include({ name: 'transfer_call', status: 200 });
    expect(byType('call.transferred').data).to.deep.equal({ destination: desk, mode: 'cold' });
    expect(byType('call.ended').message).to.equal('ended by agent: transferred');

    // The caller heard the handover line before being handed over.
    const [aLeg] = simulated(to);
    expect(aLeg!.heard.map((h) => h.text).join(' ')).to.include('Connecting you to our billing desk now.');
    // The simulator bridged the caller with the destination's leg.
    const [bLeg] = simulated(desk);
    expect(bLeg).to.include({ status: 'completed', dialledBy: aLeg!.providerCallId, bridgedWith: aLeg!.providerCallId, from: aLeg!.from });
    expect(aLeg!.bridgedWith).to.equal(bLeg!.providerCallId);
    expect(simulated(other)).to.deep.equal([]);

    expect(call).to.include({ status: 'completed', hangup_by: 'agent', hangup_reason: 'transferred' });
    expect(call.transfer).to.deep.include({
      destination: desk,
      description: 'Billing and refunds',
      mode: 'cold',
      status: 'transferred',
      reason: null,
      bridged_seconds: 40,
    });
    expect(call.transfer!.transferred_at).to.be.a('string');
    expect(Date.parse(call.transfer!.transferred_at as string)).to.be.at.least(Date.parse(call.started_at as string));

    // Charged: live time + bridged time at the plan's price, one `call` item.
    expect(call.duration_seconds).to.be.above(1);
    expect(call.cost_paise).to.equal(contractCallCost(call.duration_seconds + 40));
    const items = await LedgerItem.find({ call_id: placed.id }).lean();
    expect(items.map((i) => [i.kind, i.amount_paise])).to.deep.equal([['call', -call.cost_paise]]);
  });

  it('cold to a number that does not answer within ring_timeout_seconds: call.transfer_failed no-answer, the call ends, only the live time is charged', async () => {
    const desk = number({ kind: 'no-answer', ringSeconds: 200 });
    const agent = await createAgent({
      welcome_message: 'Hello.',
      call: { ...OPEN_HOURS, transfer: { destinations: [{ number: desk, description: 'The manager' }], ring_timeout_seconds: 10 } },
    });
    const to = number({ kind: 'answer', answerAfterSeconds: 1, conversation: [{ pauseMs: 300 }, { say: 'Get me your manager' }] });
    const placed = await place(agent.id, to);
    const { call, events } = await finished(placed.id);
    const types = events.map((e) => e.type);
    expect(types.filter((t) => t.startsWith('call.transfer') || t === 'call.ended')).to.deep.equal([
      'call.transfer_started',
      'call.transfer_failed',
      'call.ended',
    ]);
    const failed = events.find((e) => e.type === 'call.transfer_failed')!;
    expect(failed.level).to.equal('warning');
    expect(failed.data).to.deep.equal({ destination: desk, mode: 'cold', reason: 'no-answer' });
    expect(call).to.include({ status: 'completed', hangup_by: 'system', hangup_reason: 'transfer failed' });
    expect(call.transfer).to.deep.include({ destination: desk, status: 'failed', reason: 'no-answer', transferred_at: null, bridged_seconds: 0 });
    expect(simulated(desk)[0]).to.include({ status: 'no-answer', bridgedWith: null });
    expect(call.cost_paise).to.equal(contractCallCost(call.duration_seconds));
  });

  it('cold, hung up through the API while bridged: the destination leg goes too, its seconds are the bridged time charged', async () => {
    const desk = number({ kind: 'answer', answerAfterSeconds: 1 });
    const agent = await createAgent({
      welcome_message: 'Hello.',
      call: { ...OPEN_HOURS, transfer: { destinations: [{ number: desk, description: 'Support' }] } },
    });
    const to = number({ kind: 'answer', answerAfterSeconds: 1, conversation: [{ say: 'Give me a human' }] });
    const placed = await place(agent.id, to);
    await until(
      () => timeline(placed.id),
      (list) => list.some((e) => e.type === 'call.transferred'),
      60_000,
    );
    // 1 s of real time bridged: 20 s at this scale.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const res = await stack.api.request(`/api/v1/calls/${placed.id}/hangup`, withJson('POST', {}, stack.owner.auth));
    expect(res.status, await res.clone().text()).to.equal(200);
    const { call } = await finished(placed.id);
    const [bLeg] = simulated(desk);
    expect(bLeg!.status).to.equal('completed');
    expect(call.transfer).to.deep.include({ status: 'transferred' });
    const bridged = call.transfer!.bridged_seconds as number;
    expect(bridged).to.be.at.least(15);
    expect(call.cost_paise).to.equal(contractCallCost(call.duration_seconds + bridged));
  });

  it('an agent without destinations is never offered transfer_call (the caller asking for a person gets an answer)', async () => {
    const agent = await createAgent({ welcome_message: 'Hello.', call: { ...OPEN_HOURS, hangup_after_silence_seconds: 5 } });
    const to = number({ kind: 'answer', answerAfterSeconds: 1, conversation: [{ say: 'I want a person' }, { hangUp: true, afterAgentSilenceMs: 400 }] });
    const placed = await place(agent.id, to);
    const { call, events } = await finished(placed.id);
    expect(events.map((e) => e.type).filter((t) => t.startsWith('call.transfer') || t === 'tool.call')).to.deep.equal([]);
    expect(events.find((e) => e.type === 'agent.reply')!.message).to.equal('You said: I want a person. How can I help further?');
    expect(call.transfer).to.equal(null);
  });

  it('warm: the caller hears the hold line, the destination is called and briefed with a summary, then both are joined (call.transferred) and the agent leaves (timing: joined before the desk hangs up, 16 s after answering)', async () => {
    // The person at the desk answers after 2 s, listens, and hangs up 320 s later (16 s of real time):
    // the briefing and the join must be over by then. With 8 s, a busy machine joined them 40 ms before.
    const desk = number({ kind: 'answer', answerAfterSeconds: 2, hangUpAfterSeconds: 320 });
    const agent = await createAgent({
      welcome_message: 'Hello, this is Asha.',
      call: { ...OPEN_HOURS, transfer: { destinations: [{ number: desk, description: 'Billing and refunds', mode: 'warm' }] } },
    });
    const to = number({ kind: 'answer', answerAfterSeconds: 1, conversation: [{ say: 'I want a person for billing' }] });
    const placed = await place(agent.id, to);
    const { call, events } = await finished(placed.id);
    const types = events.map((e) => e.type);
    expect(
      types.filter((t) => ['tool.call', 'call.transfer_started', 'tool.result', 'call.transferred', 'call.transfer_failed', 'call.ended'].includes(t)),
    ).to.deep.equal(['tool.call', 'call.transfer_started', 'tool.result', 'call.transferred', 'call.ended']);
    expect(events.find((e) => e.type === 'call.transferred')!.data).to.deep.equal({ destination: desk, mode: 'warm' });
    expect(events.find((e) => e.type === 'tool.result')!.data.status).to.equal(200);

    const [aLeg] = simulated(to);
    const [bLeg] = simulated(desk);
    // The caller heard the built-in hold line; the person heard the summary of the call, from the model.
    expect(aLeg!.heard.map((h) => h.text).join(' ')).to.include('Please hold while I connect you to a colleague.');
    expect(bLeg!.heard.map((h) => h.text).join(' ')).to.include('A caller needs help. They said: I want a person for billing.');
    expect(bLeg!.from).to.equal(aLeg!.from);
    // Both in one conference room, bridged.
    expect(aLeg!.bridgedWith).to.equal(bLeg!.providerCallId);
    expect(bLeg!.bridgedWith).to.equal(aLeg!.providerCallId);

    expect(call).to.include({ status: 'completed', hangup_by: 'agent', hangup_reason: 'transferred' });
    expect(call.transfer).to.deep.include({ destination: desk, mode: 'warm', status: 'transferred', reason: null });
    const bridged = call.transfer!.bridged_seconds as number;
    expect(bridged, `bridged ${bridged} simulated seconds before the desk hung up (timing: briefed and joined within its 16 s)`).to.be.above(1);
    expect(call.cost_paise).to.equal(contractCallCost(call.duration_seconds + bridged));
  });

  it('warm to a number that does not answer: call.transfer_failed no-answer, the agent tells the caller and the call goes on', async () => {
    const desk = number({ kind: 'no-answer', ringSeconds: 200 });
    const agent = await createAgent({
      welcome_message: 'Hello, this is Asha.',
      call: {
        ...OPEN_HOURS,
        transfer: {
          destinations: [{ number: desk, description: 'The manager', mode: 'warm' }],
          ring_timeout_seconds: 10,
          handover_message: 'One moment, I am calling my manager.',
        },
      },
    });
    const to = number({
      kind: 'answer',
      answerAfterSeconds: 1,
      conversation: [{ say: 'Get me your manager' }, { say: 'Okay, bye.', afterAgentSilenceMs: 2500 }],
    });
    const placed = await place(agent.id, to);
    const { call, events } = await finished(placed.id);
    const failed = events.find((e) => e.type === 'call.transfer_failed')!;
    expect(failed.data).to.deep.equal({ destination: desk, mode: 'warm', reason: 'no-answer' });
    const after = events.slice(events.indexOf(failed));
    expect(after.map((e) => e.type)).to.include.members(['tool.result', 'agent.reply', 'user.turn', 'call.ended']);
    expect(after.find((e) => e.type === 'agent.reply')!.message).to.equal(
      'I am sorry, I could not reach anyone right now (no-answer). I can keep helping you myself.',
    );
    expect(
      simulated(to)[0]!
        .heard.map((h) => h.text)
        .join(' '),
    ).to.include('I could not reach anyone right now');
    expect(simulated(desk)[0]).to.include({ status: 'no-answer' });
    expect(call).to.include({ hangup_by: 'agent', hangup_reason: 'end_call' });
    expect(call.transfer).to.deep.include({ destination: desk, mode: 'warm', status: 'failed', reason: 'no-answer', bridged_seconds: 0 });
    expect(call.cost_paise).to.equal(contractCallCost(call.duration_seconds));
  });

  it("warm to a number where a machine answers (the provider's machine detection): call.transfer_failed machine, the agent stays with the caller", async () => {
    const desk = number({ kind: 'machine', answerAfterSeconds: 1, greeting: 'You have reached the billing desk, please leave a message after the beep.' });
    const agent = await createAgent({
      welcome_message: 'Hello, this is Asha.',
      call: { ...OPEN_HOURS, transfer: { destinations: [{ number: desk, description: 'Billing', mode: 'warm' }] } },
    });
    const to = number({ kind: 'answer', answerAfterSeconds: 1, conversation: [{ say: 'I want a person' }, { say: 'Okay, bye.', afterAgentSilenceMs: 2500 }] });
    const placed = await place(agent.id, to);
    const { call, events } = await finished(placed.id);
    expect(events.find((e) => e.type === 'call.transfer_failed')!.data).to.deep.equal({ destination: desk, mode: 'warm', reason: 'machine' });
    expect(events.some((e) => e.type === 'agent.reply' && e.message.includes('(machine)'))).to.equal(true);
    expect(call.transfer).to.deep.include({ status: 'failed', reason: 'machine' });
    expect(call).to.include({ hangup_reason: 'end_call' });
    // The machine's call was hung up, and the person's summary never played to it.
    const [machine] = simulated(desk);
    expect(machine!.status).to.equal('completed');
    expect(machine!.heard.map((h) => h.text).join(' ')).to.not.include('A caller needs help');
  });

  describe('settings', () => {
    it('defaults to no destinations, a 30 s ring and no handover line; destinations take mode cold', async () => {
      const plain = await createAgent({});
      expect(plain.call.transfer).to.deep.equal({ destinations: [], handover_message: '', ring_timeout_seconds: 30 });
      const agent = await createAgent({
        call: {
          transfer: {
            destinations: [
              { number: '+919812345678', description: 'Support' },
              { number: '+14155550100', description: 'US desk', mode: 'warm' },
            ],
          },
        },
      });
      expect(agent.call.transfer).to.deep.equal({
        destinations: [
          { number: '+919812345678', description: 'Support', mode: 'cold' },
          { number: '+14155550100', description: 'US desk', mode: 'warm' },
        ],
        handover_message: '',
        ring_timeout_seconds: 30,
      });
    });

    const refused = async (transfer: Record<string, unknown>) =>
      onlyIssue(await stack.api.request('/api/v1/agents', withJson('POST', { name: 'T', call: { transfer } }, stack.owner.auth)));

    it('refuses a number that is not E.164, a repeated number, more than 10 destinations, an empty description and a ring timeout out of 10..120 (422 at the field)', async () => {
      const notE164 = await refused({ destinations: [{ number: '09812345678', description: 'x' }] });
      expect(notE164).to.deep.include({ type: 'value_error', loc: ['body', 'call', 'transfer', 'destinations', 0, 'number'], input: '09812345678' });
      const repeated = await refused({
        destinations: [
          { number: '+919812345678', description: 'a' },
          { number: '+919812345678', description: 'b' },
        ],
      });
      expect(repeated).to.deep.include({ type: 'value_error', loc: ['body', 'call', 'transfer', 'destinations', 1, 'number'] });
      expect(repeated.msg).to.contain('unique');
      const eleven = Array.from({ length: 11 }, (_, i) => ({ number: `+9198000000${String(i).padStart(2, '0')}`, description: 'desk' }));
      expect((await refused({ destinations: eleven })).loc).to.deep.equal(['body', 'call', 'transfer', 'destinations']);
      expect((await refused({ destinations: [{ number: '+919812345678', description: '' }] })).loc).to.deep.equal([
        'body',
        'call',
        'transfer',
        'destinations',
        0,
        'description',
      ]);
      expect((await refused({ destinations: [{ number: '+919812345678', description: 'x', mode: 'hot' }] })).loc).to.deep.equal([
        'body',
        'call',
        'transfer',
        'destinations',
        0,
        'mode',
      ]);
      expect((await refused({ ring_timeout_seconds: 9 })).loc).to.deep.equal(['body', 'call', 'transfer', 'ring_timeout_seconds']);
      expect((await refused({ ring_timeout_seconds: 121 })).loc).to.deep.equal(['body', 'call', 'transfer', 'ring_timeout_seconds']);
      // Ten are fine.
      const ten = await stack.api.request(
        '/api/v1/agents',
        withJson('POST', { name: 'T', call: { transfer: { destinations: eleven.slice(0, 10) } } }, stack.owner.auth),
      );
      expect(ten.status).to.equal(201);
    });

    it('refuses a custom tool named transfer_call', async () => {
      const res = await stack.api.request(
        '/api/v1/agents',
        withJson(
          'POST',
          { name: 'T', tools: [{ name: 'transfer_call', description: 'Transfers the caller somewhere else', url: 'https://example.com/t' }] },
          stack.owner.auth,
        ),
      );
      expect((await onlyIssue(res)).loc).to.deep.equal(['body', 'tools', 0, 'name']);
    });
  });
});
