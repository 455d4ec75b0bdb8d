import { expect } from 'chai';
import { Agent } from '../../../db/models/agent';
import type { SimulatedCall } from '../../../simulators/telephony/simulator';
import { messageText } from '../../../simulators/llm/simulated-replies';
import { KEYPAD_DEMO_CALLEES, KEYPAD_DEMO_NUMBERS } from '../../../simulators/telephony/demo-callees';
import { OPEN_HOURS, useCallStack } from '../../support/call-stack';
import { agentsClient, onlyIssue } from '../agents/helpers';

type Call = Record<string, unknown> & { id: string; status: string; transcript: { role: string; text: string; interrupted: boolean }[] };

/**
 * Keypad digits (`call.keypad`, issue 20) end to end: the API places the call, the worker
 * dials the telephony simulator, whose scripted callee plays a phone menu (recognising the
 * agent's DTMF tones with its own detector) or presses keys (the stream's `dtmf` events); the
 * media service runs the conversation against the recognition, language-model and synthesis
 * simulators. Real API, workers, media service, FerretDB and Temporal.
 */
describe("Keypad digits (press_digits and the caller's keys)", function () {
  this.timeout(120_000);
  const stack = useCallStack({ numberPrefix: '+9197' });
  const { callee, createAgent } = stack;
  const agents = () => agentsClient(stack.api, { ...stack.owner.auth, 'X-Workspace-ID': stack.owner.workspaceId });
  const place = (agentId: string, to: string) => stack.place<Call>(agentId, to);
  const finished = (id: string) => stack.finished<Call>(id);
  const simulated = (to: string): SimulatedCall => stack.simulated(to)[0]!;
  /** The language-model requests of a call (those sent since `from`) whose messages mention `marker`. */
  const requestsSince = (from: number) => stack.providers.llm.requests.slice(from);

  describe('the call.keypad setting', () => {
    it('defaults to both off, fills a part left out, and keeps what is sent', async () => {
      const plain = await createAgent({});
      expect(plain.call.keypad).to.deep.equal({ press_digits: false, caller_digits: false });
      const partial = await createAgent({ call: { keypad: { press_digits: true } } });
      expect(partial.call.keypad).to.deep.equal({ press_digits: true, caller_digits: false });
      const res = await agents().update(partial.id, { name: 'Asha', call: { keypad: { caller_digits: true } } });
      expect(res.status).to.equal(200);
      expect((await res.json()).call.keypad).to.deep.equal({ press_digits: false, caller_digits: true });
      // The catalog's defaults say the same.
      const catalog = await (
        await stack.api.request('/api/v1/catalog', { headers: { ...stack.owner.auth, 'X-Workspace-ID': stack.owner.workspaceId } })
      ).json();
      expect(catalog.defaults.call.keypad).to.deep.equal({ press_digits: false, caller_digits: false });
    });

    it('refuses a value that is not a boolean, an unknown field and a custom tool named press_digits (422)', async () => {
      for (const keypad of [{ press_digits: 'yes' }, { caller_digits: 1 }, { dial: true }, 'on']) {
        const res = await agents().create({ name: 'Bad', call: { keypad } });
        expect(res.status, JSON.stringify(keypad)).to.equal(422);
        const issue = await onlyIssue(res);
        expect(issue.loc.slice(0, 3), JSON.stringify(keypad)).to.deep.equal(['body', 'call', 'keypad']);
      }
      const tool = { name: 'press_digits', description: 'Presses things', url: 'https://example.com/press' };
      const issue = await onlyIssue(await agents().create({ name: 'Bad tool', tools: [tool] }));
      expect(issue.loc).to.deep.equal(['body', 'tools', 0, 'name']);
      expect(issue.msg).to.include('built-in tool');
    });

    it('reads an agent saved before the setting existed as both off, and its calls offer no press_digits', async () => {
      const agent = await createAgent({ welcome_message: 'Hello.', call: OPEN_HOURS });
      await Agent.collection.updateOne({ _id: agent.id } as never, { $unset: { 'call.keypad': '' } });
      const raw = await Agent.collection.findOne({ _id: agent.id } as never);
      expect((raw as unknown as { call: Record<string, unknown> }).call).to.not.have.property('keypad');
      const read = await (await agents().get(agent.id)).json();
      expect(read.call.keypad).to.deep.equal({ press_digits: false, caller_digits: false });
      // The old agent's call: no press_digits offered, and the caller's keys are ignored.
      const from = stack.providers.llm.requests.length;
      const to = callee({ kind: 'answer', answerAfterSeconds: 1, conversation: [{ press: '5' }, { pauseMs: 2_000 }, { say: 'Goodbye.', unprompted: true }] });
      const placed = await place(agent.id, to);
      const { call, events } = await finished(placed.id);
      expect(simulated(to).digitsPressed).to.equal('5');
      expect(events.filter((e) => e.type === 'user.turn').map((e) => [e.message, e.data.digits])).to.deep.equal([['Goodbye.', '']]);
      expect(call.transcript.filter((t) => t.role === 'user').map((t) => t.text)).to.deep.equal(['Goodbye.']);
      const requests = requestsSince(from).filter((r) => r.tools?.length);
      expect(requests).to.not.have.length(0);
      // (Other built-in tools, such as the opt-out of a new agent, may be offered: not press_digits.)
      for (const request of requests)
        expect(request.tools!.map((t) => t.function.name))
          .to.include('end_call')
          .and.not.include('press_digits');
    });
  });

  it('press_digits: the agent gets through a two-level phone menu of the simulator by its keys, heard as DTMF tones in order', async () => {
    const agent = await createAgent({
      welcome_message: '',
      system_prompt: 'You call Acme about a billing question: ask for support, then for billing.',
      call: { ...OPEN_HOURS, keypad: { press_digits: true } },
    });
    const from = stack.providers.llm.requests.length;
    const to = callee({
      kind: 'answer',
      answerAfterSeconds: 1,
      conversation: [
        { pauseMs: 1_500 },
        {
          menu: {
            say: 'Welcome to Acme. Press 1 for sales, press 2 for support.',
            options: {
              '1': [{ say: 'Sales, hello.', unprompted: true }],
              '2': [
                {
                  menu: {
                    say: 'Press 3 for billing, press 4 for technical help.',
                    options: {
                      '3': [
                        { say: 'Billing desk here.', unprompted: true },
                        { hangUp: true, afterAgentSilenceMs: 600 },
                      ],
                      '4': [{ say: 'Technical help here.', unprompted: true }],
                    },
                  },
                },
              ],
            },
          },
        },
      ],
    });
    const placed = await place(agent.id, to);
    const { call, events } = await finished(placed.id);

    const record = simulated(to);
    expect(record.digitsHeard).to.equal('23');
    expect(record.said.map((s) => s.text)).to.deep.equal([
      'Welcome to Acme. Press 1 for sales, press 2 for support.',
      'Press 3 for billing, press 4 for technical help.',
      'Billing desk here.',
    ]);
    // The tones are no words: what the callee heard as speech is the agent's reply only.
    // (The simulated speech has no pause between sentences: compared without spaces.)
    expect(record.heard.map((h) => h.text.replace(/\s+/g, ''))).to.deep.equal(['Yousaid:Billingdeskhere.HowcanIhelpfurther?']);

    const tools = events.filter((e) => e.type === 'tool.call' || e.type === 'tool.result');
    expect(tools.map((e) => [e.type, e.data.name, e.level])).to.deep.equal([
      ['tool.call', 'press_digits', 'info'],
      ['tool.result', 'press_digits', 'info'],
      ['tool.call', 'press_digits', 'info'],
      ['tool.result', 'press_digits', 'info'],
    ]);
    expect(tools[0]!.data).to.deep.equal({ name: 'press_digits', args: { digits: '2' }, url: '' });
    expect(tools[2]!.data).to.deep.equal({ name: 'press_digits', args: { digits: '3' }, url: '' });
    expect(tools[1]!.data).to.deep.include({ status: 200 });
    expect(tools[1]!.data.result).to.include('2');
    expect(tools[1]!.latency_ms).to.be.a('number').and.at.least(150);
    expect(tools[3]!.data).to.deep.include({ status: 200 });
    expect(events.filter((e) => e.type === 'user.turn').map((e) => [e.message, e.data.digits])).to.deep.equal([
      ['Welcome to Acme. Press 1 for sales, press 2 for support.', ''],
      ['Press 3 for billing, press 4 for technical help.', ''],
      ['Billing desk here.', ''],
    ]);
    expect(call).to.include({ status: 'completed', hangup_by: 'caller' });

    // The model was offered the tool, and read that the keys were sent.
    const requests = requestsSince(from);
    expect(requests[0]!.tools!.map((t) => t.function.name)).to.include('press_digits');
    const pressTool = requests[0]!.tools!.find((t) => t.function.name === 'press_digits')!;
    expect(pressTool.function.parameters).to.deep.include({ required: ['digits'] });
    const results = requests
      .flatMap((r) => r.messages)
      .filter((m) => m.role === 'tool')
      .map(messageText);
    expect(results.some((text) => /sent/.test(text) && text.includes('3'))).to.equal(true);
  });

  it('caller_digits: keys the caller presses reach the model as part of their turn, and user.turn has digits', async () => {
    const agent = await createAgent({
      welcome_message: 'Press 1 to confirm your order.',
      call: { ...OPEN_HOURS, keypad: { caller_digits: true } },
    });
    const from = stack.providers.llm.requests.length;
    const to = callee({
      kind: 'answer',
      answerAfterSeconds: 1,
      conversation: [
        // Alone: a turn after the pause between keys.
        { press: '1' },
        // Ended by #: a turn at once.
        { press: '42#', afterAgentSilenceMs: 400 },
        // With words: the keys join the caller's speech turn.
        { say: 'My code is', afterAgentSilenceMs: 400 },
        { press: '7', unprompted: true },
        { say: 'Goodbye.', afterAgentSilenceMs: 400 },
      ],
    });
    const placed = await place(agent.id, to);
    const { call, events } = await finished(placed.id);

    expect(simulated(to).digitsPressed).to.equal('142#7');
    expect(events.filter((e) => e.type === 'user.turn').map((e) => [e.message, e.data.digits])).to.deep.equal([
      ['[pressed 1]', '1'],
      ['[pressed 42#]', '42#'],
      ['My code is [pressed 7]', '7'],
      ['Goodbye.', ''],
    ]);
    expect(call.transcript.filter((t) => t.role === 'user').map((t) => t.text)).to.deep.equal([
      '[pressed 1]',
      '[pressed 42#]',
      'My code is [pressed 7]',
      'Goodbye.',
    ]);
    // The model read the keys in the caller's turns, and the simulated model answered them.
    const userMessages = requestsSince(from)
      .flatMap((r) => r.messages)
      .filter((m) => m.role === 'user')
      .map(messageText);
    expect(userMessages).to.include.members(['[pressed 1]', '[pressed 42#]', 'My code is [pressed 7]']);
    const heard = simulated(to).heard.map((h) => h.text);
    expect(heard).to.include.members(['You pressed 1.', 'You pressed 42#.']);
    // The offered tools: no press_digits without that setting.
    for (const request of requestsSince(from)) if (request.tools) expect(request.tools.map((t) => t.function.name)).to.not.include('press_digits');
    expect(call).to.include({ hangup_by: 'agent', hangup_reason: 'end_call' });
  });

  describe("npm start's demo callees, with the agents of docs/api-guide.md", () => {
    /** The demo callee's script at a test number (the fixed numbers would be shared by files). */
    const demo = (number: string): string => callee(KEYPAD_DEMO_CALLEES[number]!);

    it('the phone menu: the agent presses 2 then 3 and reaches the billing desk', async () => {
      const agent = await agents().created({
        name: 'Billing caller',
        welcome_message: '',
        system_prompt: 'You call Acme about a billing question: ask for support, then for billing.',
        voice: { language: 'en-IN' },
        call: { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC', keypad: { press_digits: true, caller_digits: false } },
      });
      const to = demo(KEYPAD_DEMO_NUMBERS.PHONE_MENU);
      const placed = await place(agent.id, to);
      const { call, events } = await finished(placed.id);
      expect(simulated(to).digitsHeard).to.equal('23');
      expect(events.filter((e) => e.type === 'tool.call').map((e) => e.data.args)).to.deep.equal([{ digits: '2' }, { digits: '3' }]);
      expect(call.transcript.filter((t) => t.role === 'user').at(-1)!.text).to.equal('Billing desk here. Your balance is 420 rupees.');
      expect(call).to.include({ hangup_by: 'caller' });
    });

    it('the caller who presses 1: the agent hears [pressed 1] and answers it', async () => {
      const agent = await agents().created({
        name: 'Order confirmer',
        welcome_message: 'Press 1 to confirm your order.',
        voice: { language: 'en-IN' },
        call: { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC', keypad: { caller_digits: true } },
      });
      const to = demo(KEYPAD_DEMO_NUMBERS.PRESSES_ONE);
      const placed = await place(agent.id, to);
      const { call, events } = await finished(placed.id);
      expect(events.filter((e) => e.type === 'user.turn').map((e) => [e.message, e.data.digits])).to.deep.equal([
        ['[pressed 1]', '1'],
        ['Goodbye.', ''],
      ]);
      expect(simulated(to).heard.map((h) => h.text)).to.include('You pressed 1.');
      expect(call).to.include({ hangup_by: 'agent', hangup_reason: 'end_call' });
    });
  });
});
