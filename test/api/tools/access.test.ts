import { expect } from 'chai';
import { agentDefaults } from '../../../domain/agents/catalog';
import { newId } from '../../../db/ids';
import { Agent, storedTool, type AgentTool } from '../../../db/models/agent';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner, apiKeyFor, memberWithRole, withJson } from '../../support/accounts';
import { startToolTarget, type ToolTarget } from '../../support/tool-target';

/** Stores an agent of the workspace with these tools, as the agents API saves one. */
async function storeAgent(workspaceId: string, tools: AgentTool[]): Promise<string> {
  const id = newId();
  const now = new Date();
  await Agent.create({
    _id: id,
    workspace_id: workspaceId,
    name: 'Tool tester',
    ...agentDefaults(),
    tools: tools.map(storedTool),
    variables: [],
    version: 1,
    updated_by: 'test',
    created_at: now,
    updated_at: now,
  });
  return id;
}

function savedTool(fields: Partial<AgentTool> & Pick<AgentTool, 'name' | 'url'>): AgentTool {
  return { description: 'Books a table', parameters: {}, method: 'POST', headers: {}, pre_call_message: '', timeout_seconds: 8, ...fields };
}

/**
 * Who may test tools, which agent's tools, what bodies are accepted, and the SSRF guard with
 * private networks not allowed (the service's default).
 */
describe('tool tests: saved tools, access, bodies and the SSRF guard', () => {
  let api: RunningApi;
  let target: ToolTarget;
  let workspaceId: string;
  let headers: Record<string, string>;
  let agentId: string;
  before(async () => {
    api = await startApi();
    target = await startToolTarget();
    const owner = await activeOwner(api);
    workspaceId = owner.workspaceId;
    headers = { ...owner.auth, 'X-Workspace-ID': workspaceId };
    agentId = await storeAgent(workspaceId, [
      savedTool({ name: 'book_table', url: `${target.origin}/echo`, headers: { 'X-Api.Key': 'k-1', $odd: 'yes' } }),
      savedTool({ name: 'find_slot', method: 'GET', url: `${target.origin}/echo?source=agent` }),
    ]);
  });
  after(async () => {
    await api.close();
    await target.close();
  });
  beforeEach(() => {
    target.received.length = 0;
  });

  const testSaved = (agent: string, toolName: string, body: unknown, h = headers) =>
    api.request(`/api/v1/agents/${agent}/tools/${toolName}/test`, withJson('POST', body, h));
  const testGiven = (body: unknown, h = headers) => api.request('/api/v1/tools/test', withJson('POST', body, h));
  const givenTool = (fields: Record<string, unknown> = {}) => ({ name: 'lookup', description: 'Looks up', url: `${target.origin}/echo`, ...fields });

  describe("an agent's saved tool", () => {
    it('runs with its saved method, URL and headers, and the sample arguments', async () => {
      const res = await testSaved(agentId, 'book_table', { arguments: { party: 4, name: 'Asha' } });
      expect(res.status).to.equal(200);
      const result = await res.json();
      expect(result).to.include({ ok: true, status: 200, error: null });
      expect(result.request).to.deep.equal({ method: 'POST', url: `${target.origin}/echo` });
      const [request] = target.received;
      expect(JSON.parse(request.body)).to.deep.equal({ party: 4, name: 'Asha' });
      expect(request.headers).to.include({ 'x-api.key': 'k-1', $odd: 'yes' });
    });

    it('runs a GET tool with its arguments as query parameters, and with no arguments given', async () => {
      expect((await testSaved(agentId, 'find_slot', { arguments: { day: 'monday' } })).status).to.equal(200);
      expect(target.received[0].query).to.deep.equal({ source: 'agent', day: 'monday' });
      expect((await testSaved(agentId, 'find_slot', {})).status).to.equal(200);
      expect(target.received[1].query).to.deep.equal({ source: 'agent' });
    });

    it('is open to API keys (agents.edit)', async () => {
      const key = await apiKeyFor(workspaceId);
      const res = await testSaved(agentId, 'find_slot', {}, key.headers);
      expect(res.status).to.equal(200);
      expect((await res.json()).ok).to.equal(true);
    });

    it("answers 404 for an unknown agent, another workspace's agent and an unknown tool", async () => {
      const other = await activeOwner(api);
      const othersAgent = await storeAgent(other.workspaceId, [savedTool({ name: 'book_table', url: `${target.origin}/echo` })]);
      for (const [agent, tool, detail] of [
        [newId(), 'book_table', 'agent not found'],
        [othersAgent, 'book_table', 'agent not found'],
        [agentId, 'no_such_tool', 'tool not found'],
        [agentId, 'Book_Table', 'tool not found'], // names are case-sensitive
      ]) {
        const res = await testSaved(agent, tool, {});
        expect(res.status, `${agent} ${tool}`).to.equal(404);
        expect(await res.json()).to.deep.equal({ detail });
      }
      expect(target.received).to.have.length(0);
      // the other workspace's owner reaches it
      expect((await testSaved(othersAgent, 'book_table', {}, { ...other.auth, 'X-Workspace-ID': other.workspaceId })).status).to.equal(200);
    });

    it('answers 422 for a malformed agent id or tool name, or a bad body', async () => {
      const cases: [string, string, unknown, (string | number)[], string][] = [
        ['not-an-id', 'book_table', {}, ['path', 'agent_id'], 'string_pattern_mismatch'],
        [agentId, '9starts_with_digit', {}, ['path', 'tool_name'], 'string_pattern_mismatch'],
        [agentId, 'a'.repeat(65), {}, ['path', 'tool_name'], 'string_pattern_mismatch'],
        [agentId, 'book_table', { arguments: [1, 2] }, ['body', 'arguments'], 'dict_type'],
        [agentId, 'book_table', { arguments: 'party=4' }, ['body', 'arguments'], 'dict_type'],
        [agentId, 'book_table', { arguments: {}, extra: true }, ['body', 'extra'], 'extra_forbidden'],
      ];
      for (const [agent, tool, body, loc, type] of cases) {
        const res = await testSaved(agent, tool, body);
        expect(res.status, JSON.stringify(body)).to.equal(422);
        const { detail } = await res.json();
        expect(
          detail.map((d: { loc: unknown[]; type: string }) => [d.loc, d.type]),
          JSON.stringify(body),
        ).to.deep.include([loc, type]);
      }
      expect(target.received).to.have.length(0);
    });
  });

  describe('who may test', () => {
    it('answers 403 to a viewer on both routes, sending nothing', async () => {
      const viewer = await memberWithRole(api, workspaceId, 'viewer');
      const saved = await testSaved(agentId, 'book_table', {}, viewer.headers);
      expect(saved.status).to.equal(403);
      expect((await saved.json()).permission).to.equal('agents.edit');
      const given = await testGiven({ tool: givenTool() }, viewer.headers);
      expect(given.status).to.equal(403);
      expect(target.received).to.have.length(0);
    });

    it('lets a developer test (agents.edit)', async () => {
      const developer = await memberWithRole(api, workspaceId, 'developer');
      expect((await testGiven({ tool: givenTool() }, developer.headers)).status).to.equal(200);
      expect((await testSaved(agentId, 'book_table', {}, developer.headers)).status).to.equal(200);
    });

    it('answers 401 without credentials', async () => {
      expect((await api.request('/api/v1/tools/test', withJson('POST', { tool: givenTool() }))).status).to.equal(401);
    });
  });

  describe('a tool given in the body: bad bodies', () => {
    // Built before the target server starts; a 422 sends nothing anyway.
    const unsentTool = (fields: Record<string, unknown> = {}) => ({ name: 'lookup', description: 'Looks up', url: 'http://127.0.0.1:9/unsent', ...fields });
    const manyArguments = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`a${i}`, i]));
    const bad: [string, unknown, (string | number)[], string][] = [
      ['no tool', { arguments: {} }, ['body', 'tool'], 'missing'],
      ['a tool without url', { tool: { name: 'x', description: 'abc' } }, ['body', 'tool', 'url'], 'missing'],
      ['a tool without description', { tool: { name: 'x', url: 'http://127.0.0.1/' } }, ['body', 'tool', 'description'], 'missing'],
      ['a non-http url', { tool: unsentTool({ url: 'ftp://127.0.0.1/file' }) }, ['body', 'tool', 'url'], 'string_pattern_mismatch'],
      ['an unknown method', { tool: unsentTool({ method: 'PUT' }) }, ['body', 'tool', 'method'], 'enum'],
      ['a timeout below 1 s', { tool: unsentTool({ timeout_seconds: 0.99 }) }, ['body', 'tool', 'timeout_seconds'], 'greater_than_equal'],
      ['a timeout above 30 s', { tool: unsentTool({ timeout_seconds: 30.01 }) }, ['body', 'tool', 'timeout_seconds'], 'less_than_equal'],
      ['a bad tool name', { tool: unsentTool({ name: 'has space' }) }, ['body', 'tool', 'name'], 'string_pattern_mismatch'],
      ['a non-string header', { tool: unsentTool({ headers: { 'X-N': 1 } }) }, ['body', 'tool', 'headers', 'X-N'], 'string_type'],
      ['arguments that are not an object', { tool: unsentTool(), arguments: null }, ['body', 'arguments'], 'dict_type'],
      ['101 arguments', { tool: unsentTool(), arguments: manyArguments(101) }, ['body', 'arguments'], 'too_long'],
      ['an unknown field', { tool: unsentTool(), args: {} }, ['body', 'args'], 'extra_forbidden'],
    ];
    for (const [what, body, loc, type] of bad) {
      it(`answers 422 ${type} at ${loc.join('.')} for ${what}, sending nothing`, async () => {
        const res = await testGiven(body);
        expect(res.status).to.equal(422);
        const { detail } = await res.json();
        expect(detail.map((d: { loc: unknown[]; type: string }) => [d.loc, d.type])).to.deep.include([loc, type]);
        expect(target.received).to.have.length(0);
      });
    }

    it('accepts the bounds: timeouts of 1 and 30 s, 100 arguments', async () => {
      for (const body of [
        { tool: givenTool({ timeout_seconds: 1 }) },
        { tool: givenTool({ timeout_seconds: 30 }) },
        { tool: givenTool(), arguments: manyArguments(100) },
      ]) {
        const res = await testGiven(body);
        expect(res.status, JSON.stringify(body).slice(0, 80)).to.equal(200);
        expect((await res.json()).ok).to.equal(true);
      }
      expect(Object.keys(JSON.parse(target.received[2].body))).to.have.length(100);
    });
  });

  describe('the SSRF guard with private networks not allowed (the default)', () => {
    let guarded: RunningApi;
    let guardedHeaders: Record<string, string>;
    let guardedAgentId: string;
    before(async () => {
      guarded = await startApi({ toolsAllowPrivateNetworks: false });
      const owner = await activeOwner(guarded);
      guardedHeaders = { ...owner.auth, 'X-Workspace-ID': owner.workspaceId };
      guardedAgentId = await storeAgent(owner.workspaceId, [savedTool({ name: 'local_hook', url: `${target.origin}/echo` })]);
    });
    after(() => guarded.close());

    const refused: [string, () => string, string][] = [
      ['127.0.0.1', () => `http://127.0.0.1:${target.port}/echo`, `127.0.0.1 is a loopback address`],
      ['127.0.0.1 written as one number', () => `http://2130706433:${target.port}/echo`, `127.0.0.1 is a loopback address`],
      ['localhost', () => `http://localhost:${target.port}/echo`, 'localhost resolves to '],
      ['[::1]', () => `http://[::1]:${target.port}/echo`, '::1 is a loopback address'],
      ['[::ffff:127.0.0.1]', () => `http://[::ffff:127.0.0.1]:${target.port}/echo`, '::ffff:7f00:1 is a loopback address'],
      ['0.0.0.0', () => `http://0.0.0.0:${target.port}/echo`, '0.0.0.0 is an unspecified address'],
      ['10.0.0.1', () => 'http://10.0.0.1/admin', '10.0.0.1 is a private address'],
      ['192.168.1.1 over https', () => 'https://192.168.1.1/', '192.168.1.1 is a private address'],
      ['the cloud metadata service 169.254.169.254', () => 'http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a link-local address'],
    ];
    for (const [what, url, message] of refused) {
      it(`refuses ${what} with blocked_address, connecting nowhere`, async () => {
        const before = target.connections();
        const res = await guarded.request('/api/v1/tools/test', withJson('POST', { tool: givenTool({ url: url(), timeout_seconds: 1 }) }, guardedHeaders));
        expect(res.status).to.equal(200);
        const result = await res.json();
        expect(result).to.include({ ok: false, status: null, result: '', truncated: false });
        expect(result.error.kind).to.equal('blocked_address');
        expect(result.error.message).to.include(message).and.to.include('tools may only call public addresses');
        expect(result.latency_ms).to.be.below(900); // refused before any attempt, not timed out
        expect(target.connections()).to.equal(before);
        expect(target.received).to.have.length(0);
      });
    }

    it("refuses an agent's saved tool aimed at a private address the same way", async () => {
      const before = target.connections();
      const res = await guarded.request(`/api/v1/agents/${guardedAgentId}/tools/local_hook/test`, withJson('POST', { arguments: { a: 1 } }, guardedHeaders));
      expect(res.status).to.equal(200);
      expect((await res.json()).error).to.deep.equal({
        kind: 'blocked_address',
        message: '127.0.0.1 is a loopback address; tools may only call public addresses',
      });
      expect(target.connections()).to.equal(before);
    });
  });
});
