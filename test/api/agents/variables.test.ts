import { expect } from 'chai';
import { startApi, type RunningApi } from '../../support/api';
import { activeOwner } from '../../support/accounts';
import { agentsClient } from './helpers';

/** The read-only `variables` of an agent follow its welcome message and prompt on every save. */
describe('agents: variables', () => {
  let api: RunningApi;
  let agents: ReturnType<typeof agentsClient>;
  before(async () => {
    api = await startApi();
    const owner = await activeOwner(api);
    agents = agentsClient(api, owner.auth);
  });
  after(() => api.close());

  it("lists the welcome message's variables, then the prompt's, in order of first use, each once", async () => {
    const agent = await agents.created({
      name: 'EMI',
      welcome_message: 'Namaste {customer_name}, this is about {loan_id}.',
      system_prompt: 'Ask {customer_name} to pay {amount} for {loan_id} by {due_date}.',
    });
    expect(agent.variables).to.deep.equal(['customer_name', 'loan_id', 'amount', 'due_date']);
  });

  it("changes with the texts on update, and shows each version's own", async () => {
    const agent = await agents.created({ name: 'V', welcome_message: 'Hi {a}' });
    const updated = await (await agents.update(agent.id, { name: 'V', system_prompt: 'Use {b} and {c}' })).json();
    expect(updated.variables).to.deep.equal(['b', 'c']);
    expect((await (await agents.version(agent.id, 1)).json()).variables).to.deep.equal(['a']);
    const restored = await (await agents.restore(agent.id, 1)).json();
    expect(restored.variables).to.deep.equal(['a']);
  });

  it('cannot be set by the client', async () => {
    const res = await agents.create({ name: 'x', variables: ['forced'] });
    expect(res.status).to.equal(422);
    expect((await res.json()).detail[0]).to.deep.include({ type: 'extra_forbidden', loc: ['body', 'variables'] });
  });
});
