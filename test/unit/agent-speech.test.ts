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

  it('holds a speculative reply: nothing plays and nothing is counted until keep, then the held audio goes out first with its latency from the turn', async () => {
    let clock = 10_000;
    const t = conversationContext({ deps: { now: () => clock } });
    const reply = t.ctx.speech.start(true, true);
    const saying = t.ctx.speech.queue(reply, null);
    saying.say('Hello there.');
    await saying.finished();
    expect(t.played).to.deep.equal([]);
    expect(t.events).to.deep.equal([]);
    expect(t.ctx.state.usage.tts_characters).to.equal(0);
    expect(reply.usage.tts_characters).to.equal(12);
    clock += 300;
    t.ctx.speech.keep(reply, 10_200);
    expect(t.played).to.have.length(1);
    expect(t.ctx.state.usage.tts_characters).to.equal(12);
    expect(t.events).to.deep.equal([{ type: 'tts.first_audio', message: '', level: 'info', latencyMs: 100, data: {} }]);
    // Once kept, it speaks as any reply: at once, counted on the call.
    const more = t.ctx.speech.queue(reply, null);
    more.say('Bye.');
    await more.finished();
    expect(t.played).to.have.length(2);
    expect(t.ctx.state.usage.tts_characters).to.equal(16);
  });

  it('a speculative reply is void once the agent starts saying anything else', () => {
    const t = conversationContext();
    const held = t.ctx.speech.start(true, true);
    t.ctx.speech.start(true);
    expect(held.abort.signal.aborted).to.equal(true);
  });
});
