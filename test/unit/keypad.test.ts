import { expect } from 'chai';
import { CallerDigits, digitsToPress, pressedText, PRESS_DIGITS_TOOL } from '../../media/conversation/keypad';
import { defaultRespond, type ChatCompletionRequestBody } from '../../simulators/llm/simulated-replies';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('keypad digits in the conversation engine and the simulated model', () => {
  describe("CallerDigits (the caller's keys gathered for their turn)", () => {
    it('makes a turn of keys pressed alone after the pause between keys, or at # at once', async () => {
      const turns: string[] = [];
      const digits = new CallerDigits(
        (d) => turns.push(d),
        () => false,
        60,
      );
      digits.press('1');
      digits.press('2');
      await sleep(30);
      expect(turns).to.deep.equal([]);
      digits.press('3');
      await sleep(100);
      expect(turns).to.deep.equal(['123']);
      digits.press('4');
      digits.press('#');
      expect(turns).to.deep.equal(['123', '4#']);
      await sleep(100);
      expect(turns).to.deep.equal(['123', '4#']);
      digits.close();
    });

    it('leaves keys pressed while the caller speaks to their speech turn (take), and take empties', async () => {
      const turns: string[] = [];
      let speaking = true;
      const digits = new CallerDigits(
        (d) => turns.push(d),
        () => speaking,
        30,
      );
      digits.press('7');
      await sleep(80);
      expect(turns).to.deep.equal([]);
      expect(digits.take()).to.equal('7');
      expect(digits.take()).to.equal('');
      speaking = false;
      digits.press('8');
      digits.close();
      await sleep(80);
      expect(turns).to.deep.equal([]);
    });

    it('checks press_digits arguments and writes pressed keys as the turn shows them', () => {
      expect(digitsToPress({ digits: '12w#' })).to.deep.equal({ digits: '12w#' });
      for (const digits of ['', 'abc', 12, undefined, '1'.repeat(41)]) expect(digitsToPress({ digits })).to.have.property('problem');
      expect(pressedText('42#')).to.equal('[pressed 42#]');
      expect(PRESS_DIGITS_TOOL.parameters).to.deep.include({ required: ['digits'] });
    });
  });

  describe("the simulated model's keypad rules", () => {
    const tools = [
      { type: 'function', function: { name: 'press_digits' } },
      { type: 'function', function: { name: 'end_call' } },
    ];
    const system = { role: 'system', content: 'You call Acme about a billing question: ask for support, then for billing.' };
    const ask = (user: string, offered = tools): ChatCompletionRequestBody => ({
      model: 'm',
      tools: offered,
      messages: [system, { role: 'user', content: user }],
    });

    it('presses the key of the option the system prompt asks for, or the only key named', () => {
      expect(defaultRespond(ask('Welcome. Press 1 for sales, press 2 for support.'))).to.deep.equal({
        toolCalls: [{ name: 'press_digits', arguments: { digits: '2' } }],
      });
      expect(defaultRespond(ask('Press 3 for billing or press 4 for technical help.'))).to.deep.equal({
        toolCalls: [{ name: 'press_digits', arguments: { digits: '3' } }],
      });
      expect(defaultRespond(ask('Enter your account then press #.'))).to.deep.equal({ toolCalls: [{ name: 'press_digits', arguments: { digits: '#' } }] });
      // No option wanted and several keys: no key pressed.
      expect(defaultRespond(ask('Press 1 for sales, press 5 for cricket.')).toolCalls).to.equal(undefined);
      // Not offered: never pressed.
      expect(defaultRespond(ask('Press 1 for sales, press 2 for support.', [])).toolCalls).to.equal(undefined);
    });

    it('stays silent after press_digits answers, and answers keys the caller pressed', () => {
      const after: ChatCompletionRequestBody = {
        model: 'm',
        tools,
        messages: [
          system,
          { role: 'user', content: 'Press 2 for support.' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'press_digits', arguments: '{"digits":"2"}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: 'sent' },
        ],
      };
      expect(defaultRespond(after)).to.deep.equal({ text: '' });
      expect(defaultRespond(ask('[pressed 1]', []))).to.deep.equal({ text: 'You pressed 1.' });
      expect(defaultRespond(ask('My code is [pressed 7]', [])).text).to.equal('You said: My code is [pressed 7]. How can I help further?');
    });
  });
});
