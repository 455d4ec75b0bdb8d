import { expect } from 'chai';
import { newId } from '../../../db/ids';
import { Call } from '../../../db/models/call';
import { CallEvent } from '../../../db/models/call-event';
import { WebhookDelivery } from '../../../db/models/webhook-delivery';
import mongoose from 'mongoose';
import { saveRecording } from '../../../domain/calls/recording-store';
import { ensureRetentionSchedule } from '../../../domain/privacy/temporal';
import { RETENTION_SCHEDULE_ID, type RetentionRunResult } from '../../../contracts/retention';
import { TASK_QUEUES } from '../../../contracts/task-queues';
import { CallRecording } from '../../../media/audio/recording';
import { encodeMulaw } from '../../../providers/audio/mulaw';
import { speakText } from '../../../simulators/simulated-speech';
import { activeOwner, withJson, type SignedUp } from '../../support/accounts';
import { startApi, type RunningApi } from '../../support/api';
import { testServers } from '../../support/servers';

const DAY_MS = 24 * 3600 * 1000;
const WORDS = 'My number is 98765 43210.';

/**
 * The retention sweep (docs/decisions/0215): the workspace's `retention` periods over HTTP, then
 * one run of `retentionWorkflow` on a real ops worker and Temporal server, in batches of one:
 * exactly what is older than each period is erased, nothing newer, nothing of a workspace
 * without periods.
 */
describe('Retention: the scheduled sweep erases what is older than the workspace keeps', function () {
  this.timeout(120_000);
  let api: RunningApi;
  let owner: SignedUp;
  let other: SignedUp;

  before(async () => {
    api = await startApi({ workers: ['ops'] });
    owner = await activeOwner(api, { name: 'Asha Rao' });
    other = await activeOwner(api, { name: 'Keeps Everything' });
  });
  after(async () => {
    await testServers()
      .temporal.client.schedule.getHandle(RETENTION_SCHEDULE_ID)
      .delete()
      .catch(() => undefined);
    await api?.close();
  });

  /** A completed call `ageDays` old with a transcript, summary, an event, a delivered webhook body and a recording of the same age. */
  const oldCall = async (workspaceId: string, ageDays: number) => {
    const callId = newId();
    const at = new Date(Date.now() - ageDays * DAY_MS);
    const transcript = [{ role: 'user', text: WORDS, at, interrupted: false }];
    await Call.create({
      _id: callId,
      workspace_id: workspaceId,
      agent_id: newId(),
      agent_name: 'Asha',
      direction: 'outbound',
      to_number: '+919800000001',
      from_number: '+918000000001',
      status: 'completed',
      transcript,
      summary: `The caller said ${WORDS}`,
      extracted: { phone: '9876543210' },
      duration_seconds: 42,
      cost_paise: 350,
      created_at: at,
      updated_at: at,
    });
    await CallEvent.create({
      _id: `evt_${newId()}`,
      workspace_id: workspaceId,
      call_id: callId,
      sequence: 0,
      type: 'user.turn',
      message: WORDS,
      level: 'info',
      created_at: at,
    });
    const body = JSON.stringify({
      id: 'evt',
      type: 'call.completed',
      call_id: callId,
      data: {
        message: 'call completed',
        level: 'info',
        latency_ms: null,
        call: { id: callId, status: 'completed', transcript, transcript_text: WORDS, summary: WORDS },
      },
    });
    await WebhookDelivery.create({
      _id: `whd_${newId()}`,
      workspace_id: workspaceId,
      target: 'agent',
      url: 'https://example.com/hooks',
      event_id: 'evt',
      event_type: 'call.completed',
      call_id: callId,
      request_body: body,
      status: 'delivered',
      created_at: at,
      updated_at: at,
    });
    const recording = new CallRecording();
    recording.addCaller(encodeMulaw(speakText('hello', { sampleRate: 8000 })), 0);
    await saveRecording({ callId, workspaceId, wav: recording.toWav(), durationMs: recording.durationMs });
    await mongoose.connection.collection<{ _id: string }>('call_recordings').updateOne({ _id: callId }, { $set: { created_at: at } });
    return callId;
  };
  const keptOf = async (callId: string, who: SignedUp) => {
    const call = await (await api.request(`/api/v1/calls/${callId}`, { headers: who.auth })).json();
    const events = await (await api.request(`/api/v1/calls/${callId}/events`, { headers: who.auth })).json();
    const [delivery] = await WebhookDelivery.find({ call_id: callId }).lean();
    const recording = await api.request(`/api/v1/calls/${callId}/recording`, { headers: who.auth });
    return {
      recording: recording.status === 200,
      words:
        call.transcript.length > 0 && call.summary !== null && call.extracted !== null && events[0].message === WORDS && delivery!.request_body.includes(WORDS),
      wordsGone:
        call.transcript.length === 0 && call.summary === null && call.extracted === null && events[0].message === '' && !delivery!.request_body.includes(WORDS),
      billing: { duration_seconds: call.duration_seconds, cost_paise: call.cost_paise, status: call.status },
    };
  };

  it('sets the periods over HTTP, and one run erases recordings and words older than them, exactly', async () => {
    const set = await api.request('/api/v1/workspace', withJson('PATCH', { retention: { recordings_days: 30, transcripts_days: 90 } }, owner.auth));
    expect(set.status, await set.clone().text()).to.equal(200);
    expect((await set.json()).retention).to.deep.equal({ recordings_days: 30, transcripts_days: 90 });
    const bad = await api.request('/api/v1/workspace', withJson('PATCH', { retention: { recordings_days: 0 } }, owner.auth));
    expect(bad.status).to.equal(422);
    const fresh = await (await api.request('/api/v1/workspace', { headers: other.auth })).json();
    expect(fresh.retention).to.deep.equal({ recordings_days: null, transcripts_days: null });

    const veryOld = await oldCall(owner.workspaceId, 100);
    const middle = await oldCall(owner.workspaceId, 60);
    const recent = await oldCall(owner.workspaceId, 10);
    const othersOld = await oldCall(other.workspaceId, 400);

    const run = await testServers().temporal.client.workflow.execute('retentionWorkflow', {
      taskQueue: TASK_QUEUES.ops,
      workflowId: `retention-test-${newId()}`,
      args: [{ batchSize: 1, maxBatches: 10 }],
    });
    expect(run as RetentionRunResult).to.deep.equal({ recordings: 2, transcripts: 1, more: false });

    const billing = { duration_seconds: 42, cost_paise: 350, status: 'completed' };
    expect(await keptOf(veryOld, owner)).to.deep.include({ recording: false, words: false, wordsGone: true, billing });
    expect(await keptOf(middle, owner)).to.deep.include({ recording: false, words: true, billing });
    expect(await keptOf(recent, owner)).to.deep.include({ recording: true, words: true, billing });
    expect(await keptOf(othersOld, other)).to.deep.include({ recording: true, words: true, billing });

    // A second run finds nothing more.
    const again = await testServers().temporal.client.workflow.execute('retentionWorkflow', {
      taskQueue: TASK_QUEUES.ops,
      workflowId: `retention-test-${newId()}`,
      args: [{ batchSize: 1, maxBatches: 10 }],
    });
    expect(again).to.deep.equal({ recordings: 0, transcripts: 0, more: false });
  });

  it('a run stops at its batch bound and leaves the rest for the next', async () => {
    await oldCall(owner.workspaceId, 200);
    await oldCall(owner.workspaceId, 200);
    const bounded = await testServers().temporal.client.workflow.execute('retentionWorkflow', {
      taskQueue: TASK_QUEUES.ops,
      workflowId: `retention-test-${newId()}`,
      args: [{ batchSize: 1, maxBatches: 1 }],
    });
    expect(bounded).to.deep.equal({ recordings: 1, transcripts: 1, more: true });
  });

  it('the Schedule is created once, idempotently, and starts retentionWorkflow on the ops queue', async () => {
    await ensureRetentionSchedule(testServers().temporal.client);
    await ensureRetentionSchedule(testServers().temporal.client);
    const described = await testServers().temporal.client.schedule.getHandle(RETENTION_SCHEDULE_ID).describe();
    expect(described.action).to.deep.include({ type: 'startWorkflow', workflowType: 'retentionWorkflow', taskQueue: TASK_QUEUES.ops });
    expect(described.spec.intervals?.[0]?.every).to.equal(3_600_000);
  });
});
