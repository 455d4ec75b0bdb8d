import { expect } from 'chai';
import { Call } from '../../db/models/call';
import { CallEvent } from '../../db/models/call-event';
import { LedgerItem } from '../../db/models/ledger-item';
import { conversationIdentity } from '../support/cluster';
import { callees, clusterForThisFile, placeCalls } from '../support/cluster-load';
import { until } from '../support/until';

/** The conversation activity's heartbeat timeout (workflows/call.ts). */
const HEARTBEAT_TIMEOUT_MS = 5_000;
/** Callers with a lot to say: their calls are still live when a node dies. */
const LONG_CONVERSATION = [
  'Where is my order?',
  'I ordered it last week.',
  'It was a blue shirt.',
  'The order number is four two.',
  'Can you check again?',
  'I am still waiting.',
  'Is it shipped?',
  'Thank you, bye.',
].map((say) => ({ say }));

/**
 * A media node SIGKILLed while it carries live calls, on the cluster profile: its calls end
 * with an `error` within the heartbeat timeout, each charged its live time only; the other
 * node's calls go on untouched; new calls go to the surviving node.
 */
describe('Cluster: a media node lost under load', function () {
  this.timeout(10 * 60_000);
  const cluster = clusterForThisFile(20);

  it('ends the lost node calls with an error (timing: within the heartbeat timeout + 5 s of the kill), charged their live time; the other node and new calls carry on', async () => {
    const { stack, workspace } = cluster;
    // Live calls on both nodes: Temporal hands each conversation to whichever media node polls
    // first, so calls are placed in rounds until each node holds at least one.
    const identities = stack.identities();
    const nodeOf = new Map<string, string>();
    for (let round = 0; round < 4 && new Set(nodeOf.values()).size < 2; round++) {
      const placements = await placeCalls(stack, workspace, callees(stack, 4, { kind: 'answer', answerAfterSeconds: 0.5, conversation: LONG_CONVERSATION }), 4);
      expect(placements.map((p) => p.status)).to.deep.equal([201, 201, 201, 201]);
      const ids = placements.map((p) => p.callId!);
      // Live: each caller's first line was heard.
      const heard = await until(
        () => CallEvent.distinct('call_id', { call_id: { $in: ids }, type: 'user.turn' }),
        (callIds) => callIds.length === ids.length,
        90_000,
        500,
      );
      expect(heard).to.have.length(ids.length);
      for (const id of ids) nodeOf.set(id, identities.get((await conversationIdentity(stack.client, id)) ?? '') ?? 'unknown');
    }
    const ids = [...nodeOf.keys()];
    const lost = [...nodeOf.values()].includes('media-1') ? 'media-1' : 'media-2';
    const surviving = lost === 'media-1' ? 'media-2' : 'media-1';
    const victims = ids.filter((id) => nodeOf.get(id) === lost);
    const survivors = ids.filter((id) => nodeOf.get(id) === surviving);
    expect(victims.length + survivors.length, JSON.stringify(Object.fromEntries(nodeOf))).to.equal(ids.length);
    expect(victims.length, `calls on ${lost}`).to.be.at.least(1);
    expect(survivors.length, `calls on ${surviving}`).to.be.at.least(1);

    const startedAt = new Map((await Call.find({ _id: { $in: victims } }, { started_at: 1 }).lean()).map((c) => [String(c._id), c.started_at!.getTime()]));
    await stack.kill(lost);
    const killedAt = Date.now();

    // Each lost call ends with an error within the heartbeat timeout (and the workflow's reaction).
    const ended = await until(
      () => CallEvent.find({ call_id: { $in: victims }, type: 'call.ended' }).lean(),
      (events) => events.length === victims.length,
      30_000,
      250,
    );
    expect(ended).to.have.length(victims.length);
    for (const event of ended) {
      const afterMs = event.created_at.getTime() - killedAt;
      expect(afterMs, `timing: call ${event.call_id} ended ${afterMs} ms after the kill, over the heartbeat timeout + 5 s`).to.be.below(
        HEARTBEAT_TIMEOUT_MS + 5_000,
      );
    }
    for (const id of victims) {
      const call = (await Call.findById(id).lean())!;
      const errors = await CallEvent.find({ call_id: id, type: 'error' }).lean();
      expect(
        errors.map((e) => (JSON.parse(e.data_json) as { provider?: string }).provider),
        `error events of ${id}`,
      ).to.deep.equal(['media']);
      expect([call.status, call.hangup_by, call.hangup_reason]).to.deep.equal(['completed', 'system', 'error']);
      // Charged up to the last heartbeat the server recorded: never past the kill. The SDK sends
      // heartbeats at most every 0.8 x the timeout, so the last one may be up to that old.
      const liveSeconds = (killedAt - startedAt.get(id)!) / 1000;
      expect(call.duration_seconds).to.be.within(liveSeconds - HEARTBEAT_TIMEOUT_MS / 1000, liveSeconds + 1.5);
      const items = await LedgerItem.find({ call_id: id }).lean();
      // That time, at the plan's price, once.
      expect(call.cost_paise).to.be.greaterThan(0);
      expect(items.map((i) => [i.kind, i.amount_paise])).to.deep.equal([['call', -call.cost_paise!]]);
    }

    // New calls go to the surviving node and complete.
    const fresh = await placeCalls(stack, workspace, callees(stack, 4, { kind: 'answer', answerAfterSeconds: 0.2, hangUpAfterSeconds: 6 }), 4);
    expect(fresh.map((p) => p.status)).to.deep.equal([201, 201, 201, 201]);
    const freshIds = fresh.map((p) => p.callId!);

    // The surviving node's calls go on to the caller's goodbye, untouched.
    const all = [...survivors, ...freshIds];
    const done = await until(
      () => Call.find({ _id: { $in: all }, status: 'completed' }, { hangup_by: 1, hangup_reason: 1 }).lean(),
      (calls) => calls.length === all.length,
      180_000,
      1_000,
    );
    expect(done).to.have.length(all.length);
    expect(await CallEvent.countDocuments({ call_id: { $in: all }, type: 'error' }), 'error events on the surviving node').to.equal(0);
    expect(done.every((c) => c.hangup_reason !== 'error')).to.equal(true);
    for (const id of freshIds) expect(identities.get((await conversationIdentity(stack.client, id)) ?? ''), `node of new call ${id}`).to.equal(surviving);
    for (const id of all) expect(await LedgerItem.countDocuments({ call_id: id, kind: 'call' }), `charges of ${id}`).to.equal(1);
  });
});
