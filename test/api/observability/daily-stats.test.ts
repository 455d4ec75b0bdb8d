import { expect } from 'chai';
import { newId } from '../../../db/ids';
import { Call, type CallStatus } from '../../../db/models/call';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, apiKeyFor, memberWithRole, type SignedUp } from '../../support/accounts';
import { expectQueryIssue, getOk, type Headers } from './helpers';

interface CallSeed {
  created: string;
  status: CallStatus;
  seconds?: number;
  cost?: number;
  firstAudioMs?: number | null;
  voiceToVoice?: number[];
  agentId?: string;
}

/** A call record as the call workflow leaves it, written directly: test data with chosen times. */
async function seedCall(workspaceId: string, seed: CallSeed): Promise<void> {
  const created = new Date(seed.created);
  const connected = seed.status === 'completed';
  await Call.create({
    _id: newId(),
    workspace_id: workspaceId,
    agent_id: seed.agentId ?? 'a'.repeat(32),
    agent_name: 'Seeded',
    direction: 'outbound',
    to_number: '+919876543210',
    from_number: '+918000000001',
    status: seed.status,
    queued_at: created,
    started_at: connected ? new Date(created.getTime() + 5_000) : null,
    ended_at: new Date(created.getTime() + 5_000 + (seed.seconds ?? 0) * 1000),
    duration_seconds: connected ? (seed.seconds ?? 0) : null,
    cost_paise: connected ? (seed.cost ?? 0) : null,
    avg_first_audio_ms: connected ? (seed.firstAudioMs ?? null) : null,
    ...(seed.voiceToVoice ? { voice_to_voice_ms: seed.voiceToVoice } : {}),
    created_at: created,
    updated_at: created,
  });
}

/**
 * Dashboard numbers per day (`GET /stats/daily`): days in the request's time zone (the common
 * `timezone` rule), calls, connected calls, minutes, cost, answer rate and average
 * first-audio latency; days without calls as zeros; at most 92 days.
 */
describe('daily stats', () => {
  let api: RunningApi;
  let owner: SignedUp;
  let headers: Headers;
  const agentId = 'b'.repeat(32);

  before(async () => {
    api = await startApi();
    owner = await activeOwner(api);
    headers = { ...owner.auth, 'X-Workspace-ID': owner.workspaceId };
    const other = await activeOwner(api);
    // Around midnight in India (UTC+05:30): 18:15 UTC on the 9th is 23:45 on the 9th there,
    // 18:45 UTC is 00:15 on the 10th.
    await seedCall(owner.workspaceId, {
      created: '2026-03-09T18:15:00Z',
      status: 'completed',
      seconds: 90,
      cost: 600,
      firstAudioMs: 800,
      voiceToVoice: [700, 1100, 900],
    });
    await seedCall(owner.workspaceId, {
      created: '2026-03-09T18:45:00Z',
      status: 'completed',
      seconds: 30,
      cost: 200,
      firstAudioMs: 1200,
      agentId,
      voiceToVoice: [800, 600],
    });
    await seedCall(owner.workspaceId, { created: '2026-03-09T19:00:00Z', status: 'no-answer', agentId });
    await seedCall(owner.workspaceId, {
      created: '2026-03-09T20:00:00Z',
      status: 'completed',
      seconds: 45,
      cost: 300,
      firstAudioMs: null,
      voiceToVoice: [1000],
    });
    // Another workspace's calls on the same days never count.
    await seedCall(other.workspaceId, {
      created: '2026-03-09T18:50:00Z',
      status: 'completed',
      seconds: 600,
      cost: 4000,
      firstAudioMs: 5000,
      voiceToVoice: [5000],
    });
  });
  after(() => api.close());

  const numbers = (calls: number, connected: number, minutes: number, cost: number, answerRate: number, firstAudio: number | null) => ({
    calls,
    connected_calls: connected,
    minutes,
    cost_paise: cost,
    answer_rate: answerRate,
    avg_first_audio_ms: firstAudio,
  });
  const stats = (query: string, h = headers) => getOk(api, `/api/v1/stats/daily?${query}`, h);

  it('counts each call on its day in the requested zone, with every number of the day', async () => {
    const body = await stats('from=2026-03-09&to=2026-03-11&timezone=Asia/Kolkata');
    expect(body).to.include({ timezone: 'Asia/Kolkata', from: '2026-03-09', to: '2026-03-11' });
    expect(body.days).to.deep.equal([
      { date: '2026-03-09', ...numbers(1, 1, 1.5, 600, 1, 800), voice_to_voice_p50_ms: 900, voice_to_voice_p90_ms: 1100 },
      // Over every turn of the day's calls (600, 800, 1000), not over the calls' own figures.
      { date: '2026-03-10', ...numbers(3, 2, 1.25, 500, 0.6667, 1200), voice_to_voice_p50_ms: 800, voice_to_voice_p90_ms: 1000 },
      { date: '2026-03-11', ...numbers(0, 0, 0, 0, 0, null), voice_to_voice_p50_ms: null, voice_to_voice_p90_ms: null },
    ]);
    expect(body.totals).to.deep.equal({ ...numbers(4, 3, 2.75, 1100, 0.75, 1000), voice_to_voice_p50_ms: 800, voice_to_voice_p90_ms: 1100 });
  });

  it('moves the same calls to other days in another zone (UTC: all on the 9th; X-Timezone works too)', async () => {
    const utc = await stats('from=2026-03-09&to=2026-03-10&timezone=UTC');
    expect(utc.days.map((d: { date: string; calls: number }) => [d.date, d.calls])).to.deep.equal([
      ['2026-03-09', 4],
      ['2026-03-10', 0],
    ]);
    const res = await api.request('/api/v1/stats/daily?from=2026-03-09&to=2026-03-10', { headers: { ...headers, 'X-Timezone': 'America/New_York' } });
    expect(res.headers.get('x-timezone')).to.equal('America/New_York');
    const ny = await res.json();
    expect(ny.days.map((d: { calls: number }) => d.calls)).to.deep.equal([4, 0]); // 14:15 to 16:00 on the 9th there
  });

  it('limits to one agent with agent_id', async () => {
    const body = await stats(`from=2026-03-10&to=2026-03-10&agent_id=${agentId}&timezone=Asia/Kolkata`);
    expect(body.days).to.deep.equal([{ date: '2026-03-10', ...numbers(2, 1, 0.5, 200, 0.5, 1200), voice_to_voice_p50_ms: 600, voice_to_voice_p90_ms: 800 }]);
  });

  it('defaults to the last 7 days up to today; a lone from runs 7 days on', async () => {
    const body = await stats('timezone=UTC');
    expect(body.days).to.have.length(7);
    expect(body.to).to.equal(new Date().toISOString().slice(0, 10));
    const week = await stats('from=2026-03-05&timezone=UTC');
    expect(week).to.include({ from: '2026-03-05', to: '2026-03-11' });
    expect(week.totals.calls).to.equal(4);
  });

  it('takes up to 92 days; 93, a to before from, or a malformed day is 422; an unknown zone is 400', async () => {
    expect((await stats('from=2026-01-01&to=2026-04-02')).days).to.have.length(92);
    await expectQueryIssue(await api.request('/api/v1/stats/daily?from=2026-01-01&to=2026-04-03', { headers }), 'to');
    await expectQueryIssue(await api.request('/api/v1/stats/daily?from=2026-03-10&to=2026-03-09', { headers }), 'to');
    await expectQueryIssue(await api.request('/api/v1/stats/daily?from=2026-3-1', { headers }), 'from');
    await expectQueryIssue(await api.request('/api/v1/stats/daily?to=2026-02-30', { headers }), 'to');
    await expectQueryIssue(await api.request('/api/v1/stats/daily?agent_id=nope', { headers }), 'agent_id');
    expect((await api.request('/api/v1/stats/daily?timezone=Mars/Olympus', { headers })).status).to.equal(400);
  });

  it('needs calls.view: every role and API keys read it; no credentials is 401', async () => {
    const viewer = await memberWithRole(api, owner.workspaceId, 'viewer');
    expect((await stats('from=2026-03-10&to=2026-03-10', viewer.headers)).totals.calls).to.equal(3);
    expect((await stats('from=2026-03-10&to=2026-03-10', (await apiKeyFor(owner.workspaceId)).headers)).totals.calls).to.equal(3);
    expect((await api.request('/api/v1/stats/daily')).status).to.equal(401);
  });
});
