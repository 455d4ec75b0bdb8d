import { expect } from 'chai';
import { Call } from '../../../db/models/call';
import { DialPace } from '../../../db/models/dial-pace';
import { Workspace } from '../../../db/models/workspace';
import { takeDialMoment } from '../../../domain/calls/dial-pace';
import { callWorkflowId } from '../../../contracts/calls';
import type { CalleeScript } from '../../../simulators/telephony/simulator';
import { activeOwner, withJson, type SignedUp } from '../../support/accounts';
import { startApi, type RunningApi } from '../../support/api';
import { randomNumbers, startTestProviders, type TestProviders } from '../../support/providers';
import { currentDetails } from '../../support/temporal-cli';
import { until } from '../../support/until';
import { agentsClient } from '../agents/helpers';

const OPEN_HOURS = { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC' };
const FINAL = ['completed', 'no-answer', 'busy', 'failed', 'canceled'];
/** The account's pace in these tests: one new call every half second. */
const DIALS_PER_SECOND = 2;
const INTERVAL_MS = 1000 / DIALS_PER_SECOND;

/**
 * Dials paced as the telephony provider paces them (docs/decisions/0166): a burst of placements
 * is dialled no faster than TELEPHONY_CPS, from one pace every worker node shares; a call waiting
 * for its moment says so in its current details, and a hang-up meanwhile cancels it undialled.
 * Real API, workers, FerretDB, Temporal and the telephony simulator.
 */
describe("Calls: dials paced at the telephony account's calls per second", function () {
  this.timeout(120_000);
  let providers: TestProviders;
  let api: RunningApi;
  let owner: SignedUp;
  let agentId: string;

  const callee = (script: CalleeScript): string => {
    const [number] = randomNumbers(1).map((n) => n.replace('+9180', '+9196'));
    providers.telephony.setCallee(number, script);
    return number;
  };
  const place = async (to: string): Promise<string> => {
    const res = await api.request(
      '/api/v1/calls',
      withJson('POST', { agent_id: agentId, to_number: to, from_number: await providers.callerFor(owner.workspaceId) }, owner.auth),
    );
    expect(res.status, await res.clone().text()).to.equal(201);
    return ((await res.json()) as { id: string }).id;
  };
  const callOf = async (id: string) =>
    (await api.request(`/api/v1/calls/${id}`, { headers: owner.auth })).json() as Promise<{ status: string; hangup_reason: string | null }>;

  before(async () => {
    providers = await startTestProviders({ timeScale: 0.05 });
    api = await startApi({ workers: ['calls', 'webhooks'], providers: providers.config, dialsPerSecond: DIALS_PER_SECOND });
    owner = await activeOwner(api, { name: 'Kavya Menon' });
    await providers.callerFor(owner.workspaceId);
    await Workspace.updateOne({ _id: owner.workspaceId }, { $set: { concurrency_limit: 10 } });
    agentId = (await agentsClient(api, owner.auth).created({ name: 'Pacer', call: OPEN_HOURS })).id;
  });
  after(async () => {
    await api?.close();
    await providers?.close();
  });

  it('moments are taken one interval apart, never twice, by concurrent takers', async () => {
    const now = new Date(Date.now() + 60_000);
    const moments = await Promise.all(Array.from({ length: 12 }, () => takeDialMoment(10, now)));
    const times = moments.map((m) => m.at.getTime()).sort((a, b) => a - b);
    expect(new Set(times).size, 'distinct moments').to.equal(12);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).to.equal(100);
    expect(moments.map((m) => m.ahead).sort((a, b) => a - b)).to.deep.equal(
      moments.map((m) => Math.round((m.at.getTime() - now.getTime()) / 100)).sort((a, b) => a - b),
    );
    // Left in the future: the next test's dials would wait for it.
    await DialPace.deleteMany({});
  });

  it('a burst of five placements rings the provider no faster than its calls per second, the waiting ones saying so', async () => {
    const numbers = Array.from({ length: 5 }, () => callee({ kind: 'busy' }));
    const ids = await Promise.all(numbers.map((to) => place(to)));
    // The last one dialled waits for its moment, about two seconds: its current details say why.
    const waiting = await Promise.all(
      ids.map((id) =>
        until(
          () => currentDetails(callWorkflowId(id)),
          (d) => /waiting for the provider's pace|dialling|ringing|busy/.test(d),
          10_000,
          100,
        ),
      ),
    );
    expect(
      waiting.some((d) => /^waiting for the provider's pace: [1-9]\d* dials? ahead, dialling \+\d+ at \d\d:\d\d:\d\d/.test(d)),
      JSON.stringify(waiting),
    ).to.equal(true);
    const ended = await Promise.all(
      ids.map((id) =>
        until(
          () => callOf(id),
          (c) => FINAL.includes(c.status),
          30_000,
          200,
        ),
      ),
    );
    expect(ended.map((c) => c.status)).to.deep.equal(['busy', 'busy', 'busy', 'busy', 'busy']);
    // When each dial was sent (claimed on the record just before the provider's request), in order:
    // half a second apart at least, a timer's jitter allowed. (The provider's arrival times add the
    // requests' own latency, which the pace does not govern.)
    const claims = await Call.find({ _id: { $in: ids } }, { dial_requested_at: 1 }).lean();
    const createdAt = claims.map((c) => c.dial_requested_at!.getTime()).sort((a, b) => a - b);
    expect(providers.telephony.calls().filter((c) => numbers.includes(c.to))).to.have.length(5);
    const gaps = createdAt.slice(1).map((t, i) => t - createdAt[i]!);
    expect(Math.min(...gaps), `gaps between dials: ${gaps.join(', ')} ms`).to.be.at.least(INTERVAL_MS - 100);
    expect(createdAt.at(-1)! - createdAt[0]!).to.be.at.least(4 * INTERVAL_MS - 100);
  });

  it('a call hung up while it waits for its moment is canceled undialled, and its slot is free', async () => {
    // Ten moments taken ahead: the next call waits about five seconds.
    for (let i = 0; i < 10; i++) await takeDialMoment(DIALS_PER_SECOND, new Date());
    const to = callee({ kind: 'busy' });
    const id = await place(to);
    await until(
      () => currentDetails(callWorkflowId(id)),
      (d) => d.startsWith("waiting for the provider's pace"),
      10_000,
      100,
    );
    expect((await api.request(`/api/v1/calls/${id}/hangup`, { method: 'POST', headers: owner.auth })).status).to.equal(200);
    const call = await until(
      () => callOf(id),
      (c) => FINAL.includes(c.status),
      10_000,
      100,
    );
    expect([call.status, call.hangup_reason]).to.deep.equal(['canceled', 'canceled before the dial']);
    expect(
      providers.telephony.calls().some((c) => c.to === to),
      'the provider never got the call',
    ).to.equal(false);
    const limits = (await (await api.request('/api/v1/workspace/limits', { headers: owner.auth })).json()) as { active_calls: number };
    expect(limits.active_calls).to.equal(0);
    await DialPace.deleteMany({});
  });
});
