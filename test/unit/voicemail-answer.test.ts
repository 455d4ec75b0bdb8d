import { expect } from 'chai';
import { encodeMulaw } from '../../providers/audio/mulaw';
import { VoicemailAnswer } from '../../media/conversation/voicemail-answer';
import { conversationContext } from '../support/conversation-context';
import { until } from '../support/until';

const tone = (hz: number, ms: number) =>
  encodeMulaw(Int16Array.from({ length: (8000 * ms) / 1000 }, (_, i) => Math.round(6000 * Math.sin((2 * Math.PI * hz * i) / 8000))));
const silence = (ms: number) => encodeMulaw(new Int16Array((8000 * ms) / 1000));

describe('answering a machine in a conversation (media/conversation/voicemail-answer.ts)', () => {
  it('hang_up: stops what the agent is saying, drops the waiting turns, says call.voicemail and ends with voicemail', async () => {
    const t = conversationContext({ call: { voicemail: { detect: true, action: 'hang_up', message: '' } } });
    let dropped = 0;
    const answer = new VoicemailAnswer(t.ctx, () => dropped++);
    const reply = t.ctx.speech.start(true);
    await answer.answerMachine('provider');
    expect(reply).to.include({ interrupted: true });
    expect(reply.abort.signal.aborted).to.equal(true);
    expect(dropped).to.equal(1);
    expect(t.events).to.have.length(1);
    expect(t.events[0]).to.deep.include({ type: 'call.voicemail', data: { detected_by: 'provider', action: 'hang_up' } });
    expect(t.ctx.state.ending).to.deep.equal({ by: 'agent', reason: 'voicemail', level: 'info' });
    expect(t.played).to.deep.equal([]);
  });

  it('leave_message: once the provider finds a machine, waits for the beep, says the message (variables filled) and ends with voicemail', async () => {
    const t = conversationContext({ call: { voicemail: { detect: true, action: 'leave_message', message: 'Please call us back.' } } });
    const answer = new VoicemailAnswer(t.ctx, () => undefined);
    const screen = answer.start({ readAnsweredBy: async () => 'machine', recordMachine: async () => undefined });
    expect(await screen.untilWelcome()).to.equal(true);
    expect(answer.screen).to.equal(screen);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(t.played).to.deep.equal([]); // the greeting has not ended: nothing said yet
    t.hear(Buffer.concat([tone(1000, 400), silence(200)]));
    await until(
      async () => t.ctx.state.ending,
      (ending) => ending !== null,
      5_000,
      20,
    );
    expect(t.played.length).to.be.greaterThan(0);
    expect(t.ctx.state.transcript.map((e) => e.text)).to.deep.equal(['Please call us back.']);
    expect(t.ctx.state.ending).to.deep.equal({ by: 'agent', reason: 'voicemail', level: 'info' });
    screen.stop();
  });

  it('does nothing once the conversation has ended', async () => {
    const t = conversationContext({ call: { voicemail: { detect: true, action: 'hang_up', message: '' } } });
    t.ctx.state.end('caller', 'the caller hung up', 'info');
    await new VoicemailAnswer(t.ctx, () => undefined).answerMachine('transcript');
    expect(t.events).to.deep.equal([]);
    expect(t.ctx.state.ending!.reason).to.equal('the caller hung up');
  });
});
