import { expect } from 'chai';
import { callWorkflowId, providerStatusSignal } from '../../../contracts/calls';
import { claimMediaNode } from '../../../domain/calls/media-nodes';
import { signStreamToken } from '../../../domain/calls/stream-token';
import { UNCLAIMED_ANSWER_RELAY_MS } from '../../../media/conversation/unclaimed-answer';
import { TEST_AUTH_CONFIG } from '../../support/api';
import { OPEN_HOURS, useCallStack } from '../../support/call-stack';
import { postProviderCallback } from '../../support/provider-callbacks';
import { createLocal } from '../../support/servers';
import { openProviderEnd, type ProviderEnd } from '../../support/stream-client';
import { until } from '../../support/until';

const FINAL = ['completed', 'no-answer', 'busy', 'failed', 'canceled'];
/** Rings this long (simulated seconds: 60 s real): the tests play the answer themselves meanwhile. */
const LONG_RING = { kind: 'answer', answerAfterSeconds: 1_200 } as const;

/**
 * The API answers the provider before its `in-progress` signal reaches the call's workflow
 * (docs/decisions/0235). These tests play an API node lost between the two: the answer's trace
 * is on the call record (claimMediaNode, as the answer route writes it) and its signal never
 * goes. The media node holding the call's stream relays the answer; the hang-up's status relays
 * it before the end; a stream of a call that is over is closed at that relay, not left to
 * greet for the 30 s a conversation is kept unclaimed.
 */
describe('Calls: an answer whose signal to the workflow was lost is relayed from the call record', function () {
  this.timeout(120_000);
  const stack = useCallStack({ numberPrefix: '+9173' });
  let agentId: string;
  let otherAgentId: string;

  before(async () => {
    agentId = (await stack.createAgent({ name: 'Relay', welcome_message: 'Hello from the relay test.', call: OPEN_HOURS })).id;
    otherAgentId = (await stack.createAgent({ name: 'Other', welcome_message: 'Hello from another agent.', call: OPEN_HOURS })).id;
  });

  /** A placed call, ringing at the simulator, whose answer the test writes on its record the way the answer route does, without the signal. */
  const answeredWithoutSignal = async (): Promise<{ callId: string; providerCallId: string }> => {
    const to = stack.callee(LONG_RING);
    const { id } = await stack.place(agentId, to);
    await until(
      () => stack.getCall(id),
      (c) => c.status === 'ringing',
    );
    const media = stack.api.media!;
    expect(await claimMediaNode(id, { url: media.publicUrl, taskQueue: media.taskQueue }, new Date())).to.not.equal('call-over');
    return { callId: id, providerCallId: stack.simulated(to)[0]!.providerCallId };
  };
  /** The provider's end of the call's stream, opened as the answer's Stream XML tells it (its token naming `namedAgentId`, 0244). */
  const openStream = async (callId: string, providerCallId: string, namedAgentId?: string): Promise<ProviderEnd> => {
    const token = signStreamToken(TEST_AUTH_CONFIG.secret, callId, undefined, 'telephony', namedAgentId);
    const end = await openProviderEnd(`${stack.api.media!.publicUrl}/telephony/streams/${callId}?token=${encodeURIComponent(token)}`);
    end.start(providerCallId, `stream-${callId}`);
    return end;
  };
  const statusSignals = async (callId: string): Promise<number> => {
    const history = await createLocal().client.workflow.getHandle(callWorkflowId(callId)).fetchHistory();
    return (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === providerStatusSignal.name).length;
  };

  it("the media node holding a stream no conversation claimed relays the answer: the call goes live (timing: within the relay's 10 s + 20 s), talks with its own agent whatever agent its token names, and ends charged", async () => {
    const { callId, providerCallId } = await answeredWithoutSignal();
    // The token names another agent than the call's (0244: a hint the node reads beside the call): the call's own agent talks.
    const end = await openStream(callId, providerCallId, otherAgentId);
    const openedAt = Date.now();

    // The callee hears the welcome at once, before any workflow follows the call (0165).
    await until(
      async () => end.received.filter((f) => f.event === 'playAudio').length,
      (n) => n > 0,
      15_000,
    );
    expect((await stack.getCall(callId)).status, 'no workflow has heard of the answer yet').to.equal('ringing');

    const live = await until(
      () => stack.getCall(callId),
      (c) => c.status === 'in-progress',
      UNCLAIMED_ANSWER_RELAY_MS + 20_000,
    );
    expect(live.status, `the call was not live ${Date.now() - openedAt} ms after its stream opened: its answer was not relayed`).to.equal('in-progress');
    expect(Date.now() - openedAt).to.be.at.least(UNCLAIMED_ANSWER_RELAY_MS - 1_000);
    expect(await statusSignals(callId), 'one in-progress, from the media node').to.equal(1);

    expect((await stack.api.request(`/api/v1/calls/${callId}/hangup`, { method: 'POST', headers: stack.owner.auth })).status).to.equal(200);
    const { call, events } = await stack.finished(callId);
    const types = events.map((e) => e.type);
    expect(types, JSON.stringify(events.map((e) => [e.type, e.message]))).to.include.members(['call.started', 'welcome', 'call.ended']);
    expect(types).to.not.include('error');
    expect(events.find((e) => e.type === 'welcome')!.message, "the call's own agent's welcome").to.equal('Hello from the relay test.');
    expect(call.status).to.equal('completed');
    expect(call.duration_seconds as number).to.be.at.least(UNCLAIMED_ANSWER_RELAY_MS / 1000 - 1);
    expect(call.cost_paise as number).to.be.above(0);
    await end.closed;
  });

  it("the hang-up's status relays the answer before the end: the answered call ends completed and charged, not unconnected", async () => {
    const { callId, providerCallId } = await answeredWithoutSignal();
    // The callee hears the welcome and hangs up, before the media node's relay would come.
    const end = await openStream(callId, providerCallId);
    await until(
      async () => end.received.filter((f) => f.event === 'playAudio').length,
      (n) => n > 0,
      15_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    end.socket.close();
    await end.closed;
    const path = `/api/v1/telephony/calls/${callId}/status`;
    const params = {
      CallUUID: providerCallId,
      RequestUUID: providerCallId,
      CallStatus: 'completed',
      Duration: '2',
      HangupCause: 'NORMAL_CLEARING',
      Direction: 'outbound',
    };
    const res = await postProviderCallback(stack.api, stack.providers.telephony.authToken, path, params);
    expect(res.status).to.equal(200);

    const { call, events } = await stack.finished(callId);
    const ended = events.find((e) => e.type === 'call.ended')!;
    expect(events.map((e) => e.type)).to.include('call.started');
    expect(ended.message).to.not.match(/not connected/);
    expect(call.status).to.equal('completed');
    // Live from the stream's arrival (billing rule 2), some 2 s before the callee hung up.
    expect(call.duration_seconds as number).to.be.at.least(2);
    expect(call.cost_paise as number).to.be.above(0);
    expect(await statusSignals(callId), 'the relayed in-progress, then the end').to.equal(2);
  });

  it('a stream of a call that is over is closed at the relay (timing: within its 10 s + 8 s), not kept greeting for the 30 s of an unclaimed conversation', async () => {
    const { callId, providerCallId } = await answeredWithoutSignal();
    expect((await stack.api.request(`/api/v1/calls/${callId}/hangup`, { method: 'POST', headers: stack.owner.auth })).status).to.equal(200);
    await until(
      () => stack.getCall(callId),
      (c) => FINAL.includes(c.status),
    );

    const end = await openStream(callId, providerCallId);
    const openedAt = Date.now();
    const code = await Promise.race([end.closed, new Promise<null>((resolve) => setTimeout(() => resolve(null), UNCLAIMED_ANSWER_RELAY_MS + 8_000))]);
    const closedAfter = Date.now() - openedAt;
    expect(code, `the stream was still open ${closedAfter} ms after it opened`).to.not.equal(null);
    expect(closedAfter).to.be.at.least(UNCLAIMED_ANSWER_RELAY_MS - 1_000);
    end.socket.terminate();
  });
});
