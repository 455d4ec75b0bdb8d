import { monitorEventLoopDelay } from 'node:perf_hooks';
import { expect } from 'chai';
import { Call } from '../../db/models/call';
import { callWorkflowId } from '../../contracts/calls';
import { callHistoryFacts, conversationIdentity } from '../support/cluster';
import { calleeSilence, describeSilence, describeSlowestSilences, silenceSteps } from '../support/callee-silence';
import {
  answerToStreamSeconds,
  auditWorkspace,
  callees,
  clusterForThisFile,
  maxOverlappingCalls,
  placeCalls,
  sampleConcurrency,
  readNodeLogs,
  storyOfCall,
  untilCallsFinal,
} from '../support/cluster-load';
import { activityEvents } from '../support/workflow-history-story';

const CALLS = Number(process.env.CLUSTER_CALLS || 200);
const LIMIT = 20;
/** A callee hangs up this long after answering, unless the agent ends the call first. */
const HANG_UP_AFTER_SECONDS = 30;

/**
 * The cluster profile under load: 200 outbound calls against a concurrency limit of 20, placed
 * through the load balancer over two API nodes, run by two worker nodes and two media nodes
 * on the real Temporal server (PostgreSQL).
 */
describe('Cluster: 200 calls over two API, worker and media nodes', function () {
  this.timeout(15 * 60_000);
  const cluster = clusterForThisFile(LIMIT);

  it('completes every call once, charges it once, delivers every webhook and never exceeds the limit', async () => {
    const { stack, workspace } = cluster;
    const numbers = callees(stack, CALLS, { kind: 'answer', answerAfterSeconds: 0.2, hangUpAfterSeconds: HANG_UP_AFTER_SECONDS });
    const sampler = sampleConcurrency(stack, workspace);
    // This process is the simulated provider, the load balancer and the 200 callees at once: a
    // late turn of its event loop is silence the test adds to what it measures (printed below).
    const harnessDelay = monitorEventLoopDelay({ resolution: 10 });
    harnessDelay.enable();
    const placements = await placeCalls(stack, workspace, numbers, 10);
    expect(
      placements.filter((p) => p.status !== 201),
      'POST /calls answers',
    ).to.deep.equal([]);
    const finished = await untilCallsFinal(workspace.workspaceId, CALLS, 10 * 60_000);
    harnessDelay.disable();
    const concurrency = await sampler.stop();
    expect(finished, 'every call reached a final status').to.equal(true);

    const audit = await auditWorkspace(workspace);
    const delays = await answerToStreamSeconds(workspace.workspaceId);
    console.log(
      `      answer to stream, from the call records (started_at to the conversation's start): p50 ${delays[Math.floor(delays.length / 2)]?.toFixed(1)} s, p95 ${delays[Math.floor(delays.length * 0.95)]?.toFixed(1)} s, max ${delays.at(-1)?.toFixed(1)} s`,
    );
    // The callee's silence as the simulated callee lived it (docs/benchmarks.md, issue 27's targets).
    const placed = stack.providers.telephony.calls().filter((c) => numbers.includes(c.to));
    const silences = placed.map(calleeSilence).filter((s) => s !== null);
    console.log(
      `      the callee's silence, ${describeSilence(
        'answer to stream',
        silences.flatMap((s) => (s.toStreamMs === null ? [] : [s.toStreamMs])),
      )}`,
    );
    console.log(
      `      the callee's silence, ${describeSilence(
        'answer to first audio',
        silences.flatMap((s) => (s.toFirstAudioMs === null ? [] : [s.toFirstAudioMs])),
      )}`,
    );
    // The histogram holds the intervals between the 10 ms timer's turns: late is beyond the 10 ms.
    const ms = (ns: number) => Math.max(0, Math.round(ns / 1e6) - 10);
    console.log(
      `      this test's own event loop (simulated provider, balancer, callees) late by p50 ${ms(harnessDelay.percentile(50))} / p99 ${ms(harnessDelay.percentile(99))} / max ${ms(harnessDelay.max)} ms`,
    );
    const steps = placed.map(silenceSteps).filter((s) => s !== null);
    console.log(
      `      the longest silences:\n${describeSlowestSilences(steps)
        .map((line) => `        ${line}`)
        .join('\n')}`,
    );
    expect(audit.calls).to.have.length(CALLS);
    // A call that fails the audit is told with what the API, worker and media nodes logged about it
    // (not Temporal, PostgreSQL or FerretDB), each log read once.
    const storiesOf = async (calls: typeof audit.calls) => {
      if (calls.length === 0) return '';
      const logs = readNodeLogs(stack.logFiles().filter((file) => /\/(api|worker|media)-\d+\.log$/.test(file)));
      const nodes = stack.identities();
      const nodeOf = (identity: string) => nodes.get(identity) ?? identity;
      const story = async (callId: string) =>
        [
          await storyOfCall(callId, logs),
          "  the conversation activity in the call workflow's history (from the workflow's start):",
          ...(await activityEvents(stack.client, callWorkflowId(callId), 'runConversation', nodeOf).catch((e: Error) => [
            `  (history not read: ${e.message})`,
          ])),
        ].join('\n');
      return (await Promise.all(calls.map((c) => story(String(c._id))))).join('\n');
    };
    const notCompleted = audit.calls.filter((c) => c.status !== 'completed');
    expect(
      notCompleted.map((c) => c.status),
      `calls not completed:\n${await storiesOf(notCompleted)}`,
    ).to.deep.equal([]);
    expect(
      audit.notEndedOnce.map((c) => c._id),
      'calls without exactly one call.ended',
    ).to.deep.equal([]);
    expect(audit.misCharged, 'calls not charged exactly once').to.deep.equal([]);
    const unpaid = audit.calls.filter((c) => !((c.cost_paise ?? 0) > 0));
    expect(unpaid.length, `calls charged nothing:\n${await storiesOf(unpaid)}`).to.equal(0);
    expect(audit.ledgerSum).to.equal(audit.balance);

    // Deliveries finish after their calls: wait for the last ones.
    await workspace.receiver.waitForRequests(audit.deliveries, 120_000);
    const delivered = await auditWorkspace(workspace);
    expect(
      delivered.undelivered.map((d) => d.status),
      'deliveries not delivered',
    ).to.deep.equal([]);
    expect(delivered.unreceived.length, 'deliveries the receiver never got').to.equal(0);
    expect(delivered.eventsWithoutDelivery, 'events without a delivery').to.deep.equal([]);

    expect(concurrency.samples).to.be.greaterThan(20);
    expect(concurrency.slotKeeperMax, 'slot keeper: most live calls sampled').to.be.within(1, LIMIT);
    expect(concurrency.storedLiveMax, 'stored live calls: most sampled').to.be.within(1, LIMIT);
    expect(await maxOverlappingCalls(workspace.workspaceId), 'most calls overlapping in time').to.be.within(2, LIMIT);

    // Both media nodes ran conversations, and both worker nodes ran call workflows.
    const identities = stack.identities();
    const calls = await Call.find({ workspace_id: workspace.workspaceId }, { _id: 1 }).lean();
    const mediaNodes = new Map<string, number>();
    const workerNodes = new Set<string>();
    let startedAgain = 0;
    for (const call of calls) {
      const node = identities.get((await conversationIdentity(stack.client, String(call._id))) ?? '') ?? 'unknown';
      mediaNodes.set(node, (mediaNodes.get(node) ?? 0) + 1);
      const facts = await callHistoryFacts(stack.client, String(call._id));
      if (facts.conversationStarts > 1) startedAgain += 1;
      for (const identity of facts.workflowTaskIdentities) workerNodes.add(identities.get(identity) ?? identity);
    }
    console.log(
      `      conversations per media node: ${JSON.stringify(Object.fromEntries(mediaNodes))}; workflow tasks by ${[...workerNodes].join(', ')}; requests per API node: ${JSON.stringify(Object.fromEntries(stack.balancer.served))}; most live: slot keeper ${concurrency.slotKeeperMax}, stored ${concurrency.storedLiveMax}; conversations started again on their node (0241): ${startedAgain}`,
    );
    expect([...mediaNodes.keys()].sort()).to.deep.equal(['media-1', 'media-2']);
    expect(Math.min(...mediaNodes.values()), 'the lesser media node ran at least a fifth of the calls').to.be.at.least(CALLS / 5);
    expect([...workerNodes].filter((n) => n.startsWith('worker-')).sort()).to.deep.equal(['worker-1', 'worker-2']);
    expect([...stack.balancer.served.values()].every((n) => n > CALLS / 4)).to.equal(true);
  });
});
