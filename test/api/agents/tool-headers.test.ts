import { expect } from 'chai';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, memberWithRole, oauthTokenFor, withJson, type SignedUp } from '../../support/accounts';
import { startToolTarget, type ToolTarget } from '../../support/tool-target';
import { connectMcp, type McpSession } from '../mcp/mcp-client';
import { agentsClient } from './helpers';

const MASK = '••••••';
const TOKEN = 'Bearer crm-token-7f3a9c21';
const TENANT = 'tenant-acme-4417';

/**
 * Tools' header values are write-only (docs/decisions/0195): every answer that shows an agent
 * (HTTP and MCP, its versions, a restore, a copy) names the headers with masked values; an
 * update that sends a value back masked keeps the saved one, and the saved values still reach
 * the tool's target (the saved-tool test, as a call would send them).
 */
describe('agents: tool header values are write-only', function () {
  this.timeout(60_000);
  let api: RunningApi;
  let target: ToolTarget;
  let owner: SignedUp;
  let agents: ReturnType<typeof agentsClient>;
  let viewer: Record<string, string>;
  let mcp: McpSession;

  before(async () => {
    api = await startApi();
    target = await startToolTarget();
    owner = await activeOwner(api, { name: 'Asha Rao' });
    agents = agentsClient(api, { ...owner.auth, 'X-Workspace-ID': owner.workspaceId });
    viewer = (await memberWithRole(api, owner.workspaceId, 'viewer')).headers;
    mcp = await connectMcp(api, (await oauthTokenFor(owner.workspaceId, owner.userId)).token);
  });
  after(async () => {
    await mcp?.close();
    await api?.close();
    await target?.close();
  });
  beforeEach(() => {
    target.received.length = 0;
  });

  const lookup = (headers: Record<string, string>, name = 'lookup') => ({ name, description: 'Looks up the caller', url: `${target.origin}/echo`, headers });

  /** The headers the tool's target received when the saved tool was tested. */
  async function sentBySavedTool(agentId: string, toolName = 'lookup'): Promise<Record<string, unknown>> {
    const res = await api.request(
      `/api/v1/agents/${agentId}/tools/${toolName}/test`,
      withJson('POST', {}, { ...owner.auth, 'X-Workspace-ID': owner.workspaceId }),
    );
    expect(res.status, await res.clone().text()).to.equal(200);
    expect((await res.json()).ok).to.equal(true);
    const request = target.received.at(-1)!;
    target.received.length = 0;
    return request.headers;
  }

  const expectNoValues = (answer: unknown) => {
    const text = JSON.stringify(answer);
    expect(text).not.to.contain('crm-token');
    expect(text).not.to.contain(TENANT);
  };

  it('shows the header names with masked values in every read: create, GET (down to viewer), list, versions, MCP', async () => {
    const created = await agents.created({ name: 'Masked', tools: [lookup({ Authorization: TOKEN, 'X-Tenant': TENANT })] });
    expect(created.tools[0].headers).to.deep.equal({ Authorization: MASK, 'X-Tenant': MASK });
    expectNoValues(created);

    const got = await (await agents.get(created.id, viewer)).json();
    expect(got.tools[0].headers).to.deep.equal({ Authorization: MASK, 'X-Tenant': MASK });
    expectNoValues(await (await agents.list(viewer)).json());
    expectNoValues(await (await agents.versions(created.id, viewer)).json());
    const version = await (await agents.version(created.id, 1, viewer)).json();
    expect(version.tools[0].headers).to.deep.equal({ Authorization: MASK, 'X-Tenant': MASK });

    const viaMcp = await mcp.call('get_agent', { agent_id: created.id });
    expect(viaMcp.body.tools[0].headers).to.deep.equal({ Authorization: MASK, 'X-Tenant': MASK });
    expectNoValues((await mcp.call('list_agents')).body);

    // The values are saved all the same: the tool sends them.
    expect(await sentBySavedTool(created.id)).to.include({ authorization: TOKEN, 'x-tenant': TENANT });
  });

  it('an update keeps a value sent back masked, takes a new value, and drops a header left out', async () => {
    const created = await agents.created({ name: 'Kept', tools: [lookup({ Authorization: TOKEN, 'X-Tenant': TENANT })] });
    // What an editor does: load the agent, change something, send it back as loaded.
    const loaded = await (await agents.get(created.id)).json();
    const tool = { ...loaded.tools[0], headers: { Authorization: MASK, 'X-Trace': 'on' } };
    const res = await agents.update(created.id, { name: 'Kept 2', tools: [tool] });
    expect(res.status, await res.clone().text()).to.equal(200);
    expect((await res.json()).tools[0].headers).to.deep.equal({ Authorization: MASK, 'X-Trace': MASK });
    const sent = await sentBySavedTool(created.id);
    expect(sent).to.include({ authorization: TOKEN, 'x-trace': 'on' });
    expect(sent).not.to.have.property('x-tenant');

    expect((await agents.update(created.id, { name: 'Kept 3', tools: [{ ...tool, headers: { Authorization: 'Bearer rotated-1' } }] })).status).to.equal(200);
    expect(await sentBySavedTool(created.id)).to.include({ authorization: 'Bearer rotated-1' });

    // MCP's update_agent follows the same rule.
    const viaMcp = await mcp.call('update_agent', { agent_id: created.id, name: 'Kept 4', tools: [{ ...tool, headers: { Authorization: MASK } }] });
    expect(viaMcp.isError, JSON.stringify(viaMcp.body)).to.equal(false);
    expect(await sentBySavedTool(created.id)).to.include({ authorization: 'Bearer rotated-1' });
  });

  it('a restore and a copy carry the saved values without showing them', async () => {
    const created = await agents.created({ name: 'Restored', tools: [lookup({ Authorization: TOKEN })] });
    expect((await agents.update(created.id, { name: 'Restored', tools: [lookup({ Authorization: 'Bearer later' })] })).status).to.equal(200);
    const restored = await agents.restore(created.id, 1);
    expect(restored.status).to.equal(200);
    const body = await restored.json();
    expect(body.tools[0].headers).to.deep.equal({ Authorization: MASK });
    expectNoValues(body);
    expect(await sentBySavedTool(created.id)).to.include({ authorization: TOKEN });

    const copy = await (await agents.duplicate(created.id)).json();
    expect(copy.tools[0].headers).to.deep.equal({ Authorization: MASK });
    expect(await sentBySavedTool(copy.id)).to.include({ authorization: TOKEN });
  });

  it('refuses a masked value with no saved value to keep, and changes nothing', async () => {
    const create = await agents.create({ name: 'Copied mask', tools: [lookup({ Authorization: MASK })] });
    expect(create.status).to.equal(422);
    expect((await create.json()).detail[0].loc).to.deep.equal(['body', 'tools', 0, 'headers', 'Authorization']);

    const created = await agents.created({ name: 'Renamed', tools: [lookup({ Authorization: TOKEN })] });
    const renamed = await agents.update(created.id, { name: 'Renamed', tools: [lookup({ Authorization: MASK }, 'lookup_v2')] });
    expect(renamed.status).to.equal(422);
    expect((await renamed.json()).detail[0].msg).to.contain('send the value');
    expect((await (await agents.get(created.id)).json()).version).to.equal(1);

    const unsaved = await api.request(
      '/api/v1/tools/test',
      withJson('POST', { tool: lookup({ Authorization: MASK }) }, { ...owner.auth, 'X-Workspace-ID': owner.workspaceId }),
    );
    expect(unsaved.status).to.equal(422);
    expect((await unsaved.json()).detail[0].loc).to.deep.equal(['body', 'tool', 'headers', 'Authorization']);
    expect(target.received).to.have.length(0);
  });
});
