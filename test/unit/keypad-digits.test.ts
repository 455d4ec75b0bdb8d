import { expect } from 'chai';
import type { LlmToolCall } from '../../providers/llm/types';
import { dtmfMulaw } from '../../media/audio/dtmf';
import { KeypadDigits } from '../../media/conversation/keypad-digits';
import { conversationContext } from '../support/conversation-context';

const pressing = (digits: unknown): LlmToolCall => ({ id: 'k1', name: 'press_digits', arguments: JSON.stringify({ digits }) });
const BOTH_WAYS = { keypad: { press_digits: true, caller_digits: true } };

describe('the keypad in a conversation (media/conversation/keypad-digits.ts)', () => {
  it('offers press_digits only when the agent may press keys', () => {
    expect(new KeypadDigits(conversationContext().ctx).tool).to.equal(null);
    expect(new KeypadDigits(conversationContext({ call: BOTH_WAYS }).ctx).tool!.name).to.equal('press_digits');
  });

  it('press_digits plays the keys as DTMF tones, then answers once they have played', async () => {
    const t = conversationContext({ call: BOTH_WAYS });
    await new KeypadDigits(t.ctx).press(pressing('12#'), t.ctx.speech.start(true));
    expect(Buffer.concat(t.played).equals(dtmfMulaw('12#'))).to.equal(true);
    expect(t.types()).to.deep.equal(['tool.call', 'tool.result']);
    expect(t.events[1]).to.deep.include({ message: 'press_digits: 200', level: 'info' });
    expect(t.ctx.state.history).to.deep.equal([
      { role: 'tool', tool_call_id: 'k1', content: 'sent: the keys 12# were pressed (played to the other side as keypad tones)' },
    ]);
    expect(t.ctx.speech.playback.heard(Date.now())).to.equal(''); // tones are no words the caller heard
  });

  it('refuses digits that are no keys, playing nothing', async () => {
    const t = conversationContext({ call: BOTH_WAYS });
    await new KeypadDigits(t.ctx).press(pressing('12a'), t.ctx.speech.start(true));
    expect(t.played).to.deep.equal([]);
    expect(t.events[1]).to.deep.include({ message: 'press_digits: 0', level: 'warning' });
    expect(t.ctx.state.history[0]!.content).to.match(/^not sent: digits must be/);
  });

  it('says the keys were not all sent when the reply was cut while they played', async () => {
    const t = conversationContext({ call: BOTH_WAYS });
    const reply = t.ctx.speech.start(true);
    reply.interrupted = true;
    reply.abort.abort();
    await new KeypadDigits(t.ctx).press(pressing('1234'), reply);
    expect(t.ctx.state.history[0]!.content).to.equal('not all sent: the call moved on before the keys had played');
  });

  it("gathers the caller's keys: # makes a turn at once; keys pressed while they speak go to their speech turn", () => {
    const t = conversationContext({ call: BOTH_WAYS });
    const keypad = new KeypadDigits(t.ctx);
    const turns: string[] = [];
    let speaking = false;
    keypad.listen(
      (pressed) => turns.push(pressed),
      () => speaking,
    );
    t.pressDigit('4');
    t.pressDigit('5');
    t.pressDigit('#');
    expect(turns).to.deep.equal(['45#']);
    speaking = true;
    t.pressDigit('7');
    t.pressDigit('#');
    expect(turns).to.deep.equal(['45#']);
    expect(keypad.take()).to.equal('7#');
    expect(keypad.take()).to.equal('');
    keypad.close();
  });

  it("ignores the caller's keys when caller_digits is off, and once the conversation ended", () => {
    const off = conversationContext({ call: { keypad: { press_digits: true, caller_digits: false } } });
    const turns: string[] = [];
    const keypad = new KeypadDigits(off.ctx);
    keypad.listen(
      (pressed) => turns.push(pressed),
      () => false,
    );
    off.pressDigit('#');
    expect(keypad.take()).to.equal('');

    const ended = conversationContext({ call: BOTH_WAYS });
    const later = new KeypadDigits(ended.ctx);
    later.listen(
      (pressed) => turns.push(pressed),
      () => false,
    );
    ended.ctx.state.end('caller', 'the caller hung up', 'info');
    ended.pressDigit('#');
    expect(turns).to.deep.equal([]);
  });
});
