import { expect } from 'chai';
import { Call } from '../../db/models/call';
import { CallEvent } from '../../db/models/call-event';

import { auditWorkspace, callees, clusterForThisFile, placeCalls, untilCallsFinal } from '../support/cluster-load';
import { until } from '../support/until';

const CALLS = 30;
const LIMIT = 10;

/**
 * The Temporal server restarted while calls are live and queued: the workflows resume from
 * PostgreSQL, and the calls that were queued at that moment are dialled after it returns.
 */
describe('Cluster: the Temporal server restarted under load', function () {
  this.timeout(10 * 60_000);
  const cluster = clusterForThisFile(LIMIT);

  it('resumes every workflow and dials the queued calls once it is back', async () => {
    const { stack, workspace } = cluster;
    const placements = await placeCalls(stack, workspace, callees(stack, CALLS, { kind: 'answer', answerAfterSeconds: 0.2, hangUpAfterSeconds: 4 }), 10);
    expect(placements.filter((p) => p.status !== 201)).to.deep.equal([]);
    // Wait for a full house: the limit's worth live, the rest queued.
    await until(
      () => Call.countDocuments({ workspace_id: workspace.workspaceId, status: 'in-progress' }),
      (live) => live >= LIMIT / 2,
      60_000,
      200,
    );
    const queued = (await Call.find({ workspace_id: workspace.workspaceId, status: 'queued' }, { _id: 1 }).lean()).map((c) => String(c._id));
    expect(queued.length, 'calls queued at the restart').to.be.at.least(5);

    const restartStarted = Date.now();
    // SIGKILL: down at once, so the calls queued now are exactly those queued when it went (a
    // graceful stop serves on for seconds and may dial some of them before it exits).
    const { downAt, upAt: backAt } = await stack.temporal.restartServer!({ kill: true });
    console.log(`      Temporal server killed in ${downAt - restartStarted} ms, down for ${backAt - downAt} ms, with ${queued.length} calls queued`);

    expect(await untilCallsFinal(workspace.workspaceId, CALLS, 6 * 60_000), 'every call reached a final status').to.equal(true);
    // The queued calls were dialled after the server returned (none was lost in the queue).
    const dials = await CallEvent.find({ call_id: { $in: queued }, type: 'call.placed' }, { call_id: 1, created_at: 1 }).lean();
    expect(new Set(dials.map((d) => d.call_id)).size, 'queued calls dialled').to.equal(queued.length);
    const dialledDuring = dials.filter((d) => d.created_at.getTime() < backAt && d.created_at.getTime() > downAt);
    expect(dialledDuring, `dials while the server was down (down ${downAt} to ${backAt})`).to.deep.equal([]);

    const audit = await auditWorkspace(workspace);
    // Dialled after the restart, each queued call then runs as any other; one whose answer came
    // while the server was still settling can be dropped (`failed`, uncharged), never lost.
    const queuedCalls = await Call.find({ _id: { $in: queued } }, { status: 1, hangup_reason: 1 }).lean();
    expect(
      queuedCalls.filter((c) => !['completed', 'failed'].includes(c.status)).map((c) => c.status),
      'the queued calls',
    ).to.deep.equal([]);
    expect(queuedCalls.filter((c) => c.status === 'completed').length, 'queued calls completed').to.be.at.least(queued.length / 2);
    expect(
      audit.notEndedOnce.map((c) => c._id),
      'calls without exactly one call.ended',
    ).to.deep.equal([]);
    expect(audit.misCharged, 'calls not charged exactly once').to.deep.equal([]);
    expect(audit.ledgerSum).to.equal(audit.balance);
    const reasons = (await Call.find({ workspace_id: workspace.workspaceId }, { status: 1, hangup_reason: 1 }).lean()).map(
      (c) => `${c.status}: ${c.hangup_reason}`,
    );
    console.log(`      outcomes: ${JSON.stringify(reasons.reduce<Record<string, number>>((n, r) => ({ ...n, [r]: (n[r] ?? 0) + 1 }), {}))}`);
  });
});
