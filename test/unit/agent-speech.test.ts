import { expect } from 'chai';
import { conversationContext } from '../support/conversation-context';

describe("the agent's voice in a conversation (media/conversation/speech.ts)", () => {
  it('speaks a reply sentence by sentence, emits tts.first_audio once with its latency, and records what was said', async () => {
    let clock = 10_000;
    const t = conversationContext({ deps: { now: () => clock } });
    const reply = t.ctx.speech.start(true);
    const saying = t.ctx.speech.queue(reply, 9_600);
    saying.say('Hello there.');
    saying.say('How can I help?');
    await saying.finished();
    expect(t.played.length).to.equal(2);
    expect(t.events).to.deep.equal([{ type: 'tts.first_audio', message: '', level: 'info', latencyMs: 400, data: {} }]);
    expect(t.ctx.speech.firstAudioLatencies).to.deep.equal([400]);
    t.ctx.speech.end(reply);
    expect(t.ctx.state.transcript.map((e) => e.text)).to.deep.equal(['Hello there. How can I help?']);
    expect(t.ctx.state.history).to.deep.equal([{ role: 'assistant', content: 'Hello there. How can I help?' }]);
    clock += 1;
  });

  it('interrupt stops playback and keeps on the transcript and in the history only what the caller heard', async () => {
    let clock = 10_000;
    const t = conversationContext({ deps: { now: () => clock } });
    const reply = t.ctx.speech.start(true);
    const saying = t.ctx.speech.queue(reply, null);
    saying.say('Hello there.'); // 12 characters: 120 ms of audio
    saying.say('How can I help?');
    await saying.finished();
    t.ctx.speech.end(reply);
    clock += 130; // the first sentence has played, the second has begun (no whole word of it yet)
    t.ctx.speech.interrupt(reply);
    expect(reply.interrupted).to.equal(true);
    expect(t.cleared).to.have.length(1);
    expect(t.ctx.speech.playback.playing(clock)).to.equal(false);
    expect(t.ctx.state.transcript).to.have.length(1);
    expect(t.ctx.state.transcript[0]).to.include({ text: 'Hello there.', interrupted: true });
    expect(t.ctx.state.history).to.deep.equal([{ role: 'assistant', content: 'Hello there. ...' }]);
    expect(t.events.at(-1)).to.deep.include({ type: 'interrupted', message: 'Hello there.' });
  });
});
