import { expect } from 'chai';
import type { CalleeScript, SimulatedCall } from '../../../simulators/telephony/simulator';
import { activeOwner, type SignedUp } from '../../support/accounts';
import { startApi, type RunningApi } from '../../support/api';
import { randomNumbers, startTestProviders, type TestProviders } from '../../support/providers';
import { until } from '../../support/until';
import { agentsClient } from '../agents/helpers';
import { batchesClient, createdBatch, type Batch } from './helpers';

const OPEN_HOURS = { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC' };
const TIME_SCALE = 0.05;
const FINAL_BATCH = ['completed', 'canceled'];

/**
 * Batch contacts that an answering machine answers (docs/decisions/0159): marked `voicemail`;
 * retried per the batch's policy when the agent hangs up on machines, settled when it leaves its
 * message. Real API, workers, media service, FerretDB, Temporal and the telephony simulator.
 */
describe('Batches and voicemail: contacts answered by a machine', function () {
  this.timeout(240_000);
  let providers: TestProviders;
  let api: RunningApi;
  let owner: SignedUp;

  const callee = (script: CalleeScript): string => {
    const [number] = randomNumbers(1).map((n) => n.replace('+9180', '+9195'));
    providers.telephony.setCallee(number, script);
    return number;
  };
  const machine = (): CalleeScript => ({ kind: 'machine', answerAfterSeconds: 1, greeting: 'Leave a message after the beep.' });
  const dialled = (to: string): SimulatedCall[] => providers.telephony.calls().filter((c) => c.to === to);
  const call = async (id: string) => (await api.request(`/api/v1/calls/${id}`, { headers: owner.auth })).json();

  async function runBatch(voicemail: Record<string, unknown>, numbers: string[], fields: Record<string, string>): Promise<Batch> {
    const agent = await agentsClient(api, owner.auth).created({
      name: 'Dialler',
      welcome_message: 'Hello {name}.',
      call: { ...OPEN_HOURS, voicemail: { detect: true, ...voicemail } },
    });
    const csv = ['number,name', ...numbers.map((n, i) => `${n},Person ${i}`)].join('\n');
    const { batch } = await createdBatch(api, owner.auth, csv, { agent_id: agent.id, from_number: await providers.callerFor(owner.workspaceId), ...fields });
    const batches = batchesClient(api, owner.auth);
    return until(
      () => batches.get(batch.id),
      (b) => FINAL_BATCH.includes(b.status) && b.counts.calling === 0,
      120_000,
      250,
    );
  }

  before(async () => {
    providers = await startTestProviders({ timeScale: TIME_SCALE });
    api = await startApi({ workers: ['calls', 'webhooks', 'analytics'], providers: providers.config, media: true });
    owner = await activeOwner(api, { name: 'Asha Rao' });
  });
  after(async () => {
    await api?.close();
    await providers?.close();
  });

  it('hang_up: a machine contact is retried after the spacing like an unanswered call, then marked voicemail; a person is completed', async () => {
    const machineNumber = callee(machine());
    const person = callee({ kind: 'answer', answerAfterSeconds: 1, hangUpAfterSeconds: 20 });
    const done = await runBatch({ action: 'hang_up' }, [machineNumber, person], { max_attempts: '2', retry_spacing_seconds: '1' });
    expect(done.status).to.equal('completed');
    expect(done.counts).to.deep.include({ voicemail: 1, completed: 1, 'retry-wait': 0, pending: 0 });

    const contacts = await batchesClient(api, owner.auth).allContacts(done.id);
    expect(contacts.map((c) => [c.status, c.attempts])).to.deep.equal([
      ['voicemail', 2],
      ['completed', 1],
    ]);
    // Two calls to the machine, each ended by the agent on it.
    const calls = dialled(machineNumber);
    expect(calls).to.have.length(2);
    expect(calls[1].history[0].at.getTime() - calls[0].history.at(-1)!.at.getTime()).to.be.at.least(900);
    expect(await call(contacts[0].latest_call_id!)).to.include({ hangup_reason: 'voicemail', answered_by: 'machine' });
    // The contact filter knows the status.
    const page = await (await batchesClient(api, owner.auth).contactsPage(done.id, 'status=voicemail')).json();
    expect(page.items.map((c: { number: string }) => c.number)).to.deep.equal([machineNumber]);
  });

  it('leave_message: the message is left once and the contact is settled as voicemail, with attempts to spare', async () => {
    const machineNumber = callee(machine());
    const done = await runBatch({ action: 'leave_message', message: 'Please call Acme back, {name}.' }, [machineNumber], {
      max_attempts: '3',
      retry_spacing_seconds: '1',
    });
    expect(done.counts).to.deep.include({ voicemail: 1, 'retry-wait': 0 });
    const [contact] = await batchesClient(api, owner.auth).allContacts(done.id);
    expect(contact).to.deep.include({ status: 'voicemail', attempts: 1, next_attempt_at: null });
    expect(dialled(machineNumber)).to.have.length(1);
    expect(
      dialled(machineNumber)[0]
        .heard.map((h) => h.text)
        .join(' '),
    ).to.include('Please call Acme back, Person 0.');
  });

  it('a batch that never met a machine shows no voicemail count', async () => {
    const done = await runBatch({ action: 'hang_up' }, [callee({ kind: 'busy' })], { max_attempts: '1' });
    expect(done.counts).to.not.have.property('voicemail');
    expect(done.counts).to.deep.include({ busy: 1 });
  });
});
