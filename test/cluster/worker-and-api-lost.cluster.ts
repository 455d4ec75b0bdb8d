import { expect } from 'chai';
import { Call } from '../../db/models/call';

import { auditWorkspace, callees, clusterForThisFile, placeCalls, type Placement, untilCallsFinal } from '../support/cluster-load';

const CALLS = 80;
const LIMIT = 20;

/**
 * A worker node and an API node SIGKILLed while calls are being placed and run: nothing is
 * lost (no call, event, delivery or ledger item), nothing is charged twice, and a client sees
 * at most a retriable error (503 from the load balancer) for a request the dead API node held.
 */
describe('Cluster: a worker node and an API node lost under load', function () {
  this.timeout(10 * 60_000);
  const cluster = clusterForThisFile(LIMIT);

  it('loses no call, event, delivery or ledger item and charges nothing twice', async () => {
    const { stack, workspace } = cluster;
    const numbers = callees(stack, CALLS, { kind: 'answer', answerAfterSeconds: 0.2, hangUpAfterSeconds: 6 });
    const first = await placeCalls(stack, workspace, numbers.slice(0, 30), 10);
    // Mid-load: calls queued, live and ending; the rest still being placed.
    const [rest] = await Promise.all([placeCalls(stack, workspace, numbers.slice(30), 10), Promise.all([stack.kill('worker-1'), stack.kill('api-1')])]);
    const placements: Placement[] = [...first, ...rest];

    const refused = placements.filter((p) => p.status !== 201);
    expect(
      refused.filter((p) => p.status !== 503),
      'answers other than 201 and the retriable 503',
    ).to.deep.equal([]);
    expect(refused.length, 'requests cut by the dead API node').to.be.at.most(10);
    const accepted = placements.filter((p) => p.status === 201).map((p) => p.callId!);

    const stored = await Call.find({ workspace_id: workspace.workspaceId }, { to_number: 1 }).lean();
    // A cut request may or may not have created its call; none created two.
    expect(stored.length).to.be.within(accepted.length, accepted.length + refused.length);
    expect(new Set(stored.map((c) => c.to_number)).size, 'one call per number').to.equal(stored.length);
    expect(await untilCallsFinal(workspace.workspaceId, stored.length, 6 * 60_000), 'every call reached a final status').to.equal(true);

    const audit = await auditWorkspace(workspace);
    const ids = new Set(audit.calls.map((c) => String(c._id)));
    expect(
      accepted.filter((id) => !ids.has(id)),
      'accepted calls missing',
    ).to.deep.equal([]);
    // A call whose dial or answer was cut by the dead nodes (a dial refused, an answer request the
    // dead API node held, so the provider hung up) ends `failed`, uncharged: dropped, not lost.
    // How many is printed below; what must hold is that none is lost, unfinished or charged wrongly.
    const dropped = audit.calls.filter((c) => c.status !== 'completed');
    expect(
      dropped.filter((c) => c.status !== 'failed').map((c) => [c._id, c.status]),
      'calls neither completed nor failed',
    ).to.deep.equal([]);
    expect(dropped.every((c) => !c.cost_paise)).to.equal(true);
    expect(
      audit.notEndedOnce.map((c) => c._id),
      'calls without exactly one call.ended',
    ).to.deep.equal([]);
    expect(audit.misCharged, 'calls not charged exactly once').to.deep.equal([]);
    expect(audit.ledgerSum).to.equal(audit.balance);

    await workspace.receiver.waitForRequests(audit.deliveries, 180_000);
    const delivered = await auditWorkspace(workspace);
    expect(
      delivered.undelivered.map((d) => d.status),
      'deliveries not delivered',
    ).to.deep.equal([]);
    expect(delivered.unreceived.length, 'deliveries the receiver never got').to.equal(0);
    expect(delivered.eventsWithoutDelivery, 'events without a delivery').to.deep.equal([]);
    const reasons = await Call.find({ _id: { $in: dropped.map((c) => c._id) } }, { hangup_reason: 1 }).lean();
    console.log(
      `      ${accepted.length} accepted, ${refused.length} answered 503 by the load balancer; ${audit.calls.length} calls (${dropped.length} dropped at the failover: ${JSON.stringify(reasons.map((c) => c.hangup_reason))}), ${delivered.deliveries} deliveries`,
    );
  });
});
