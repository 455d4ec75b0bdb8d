import { expect } from 'chai';
import { activeOwner } from '../../support/accounts';
import { startApi, type RunningApi } from '../../support/api';
import { describeBounds } from './bounds';
import { agentsClient, onlyIssue } from './helpers';

const s = (n: number, c = 'x') => c.repeat(n);
const leaving = { name: 'Bounds', call: { voicemail: { detect: true, action: 'leave_message', message: 'Please call back.' } } };

/** `call.voicemail` (docs/decisions/0158) at its boundaries: POST and PUT alike, through the real API. */
describeBounds('agents: the rules of call.voicemail', [
  {
    title: 'call.voicemail.detect',
    path: ['call', 'voicemail', 'detect'],
    ok: [{ value: true }, { value: false }],
    bad: [{ value: 'yes', type: 'bool_type' }],
  },
  {
    title: 'call.voicemail.action',
    path: ['call', 'voicemail', 'action'],
    base: leaving,
    ok: [{ value: 'hang_up' }, { value: 'leave_message' }],
    bad: [{ value: 'voicemail', type: 'enum' }],
  },
  {
    title: 'call.voicemail.message',
    path: ['call', 'voicemail', 'message'],
    base: leaving,
    ok: [{ value: 'Hi {name}, please call Acme back.' }, { value: s(1000) }],
    bad: [
      { value: s(1001), type: 'string_too_long' },
      // leave_message needs a message: the rule the schema cannot state.
      { value: '', type: 'value_error' },
      { value: '   ', type: 'value_error' },
      { value: 7, type: 'string_type' },
    ],
  },
  {
    title: 'call.voicemail.action leave_message without a message',
    path: ['call', 'voicemail', 'action'],
    base: { name: 'Bounds', call: { voicemail: { detect: true } } },
    ok: [{ value: 'hang_up' }],
    bad: [{ value: 'leave_message', type: 'value_error', loc: ['body', 'call', 'voicemail', 'message'] }],
  },
]);

describe('agents: call.voicemail defaults', () => {
  let api: RunningApi;
  let agents: ReturnType<typeof agentsClient>;
  before(async () => {
    api = await startApi();
    const owner = await activeOwner(api);
    agents = agentsClient(api, { ...owner.auth, 'X-Workspace-ID': owner.workspaceId });
  });
  after(() => api.close());

  it('is off by default, and a part left out takes its default', async () => {
    expect((await agents.created({ name: 'Plain' })).call.voicemail).to.deep.equal({ detect: false, action: 'hang_up', message: '' });
    expect((await agents.created({ name: 'Detects', call: { voicemail: { detect: true } } })).call.voicemail).to.deep.equal({
      detect: true,
      action: 'hang_up',
      message: '',
    });
  });

  it('leave_message without a message is one 422 at call.voicemail.message that names the rule', async () => {
    const issue = await onlyIssue(await agents.create({ name: 'No message', call: { voicemail: { detect: true, action: 'leave_message' } } }));
    expect(issue).to.deep.include({ type: 'value_error', loc: ['body', 'call', 'voicemail', 'message'] });
    expect(issue.msg).to.match(/leave_message/);
  });
});
