import { expect } from 'chai';
import { encodeMulaw } from '../../providers/audio/mulaw';
import { speakText } from '../../simulators/simulated-speech';
import { soundsLikeVoicemail, VoicemailScreen, type AnsweredBy, type DetectedBy } from '../../media/conversation/voicemail';

const SETTINGS = { detect: true, action: 'leave_message' as const, message: 'Call back.' };

/** A screen on a clock the test moves, with the provider's verdict under the test's control. */
function screen(verdict: () => AnsweredBy = () => null) {
  let now = 0;
  const found: DetectedBy[] = [];
  const recorded: string[] = [];
  const s = new VoicemailScreen(
    SETTINGS,
    { readAnsweredBy: async () => verdict(), recordMachine: async () => void recorded.push('machine') },
    () => now,
    (by) => found.push(by),
  );
  return { s, found, recorded, advance: (ms: number) => (now += ms), at: () => now };
}

/** Feeds mu-law audio in 20 ms frames, moving the clock with it. */
function feed(t: ReturnType<typeof screen>, mulaw: Buffer): void {
  for (let i = 0; i < mulaw.length; i += 160) {
    t.advance(20);
    t.s.hearAudio(mulaw.subarray(i, i + 160));
  }
}

const tone = (hz: number, ms: number) =>
  encodeMulaw(Int16Array.from({ length: (8000 * ms) / 1000 }, (_, i) => Math.round(6000 * Math.sin((2 * Math.PI * hz * i) / 8000))));
const silence = (ms: number) => encodeMulaw(new Int16Array((8000 * ms) / 1000));

describe('voicemail screening (media/conversation/voicemail.ts)', () => {
  it('tells voicemail greetings from what people say', () => {
    for (const greeting of [
      'Please leave a message after the beep.',
      "Hi, you've reached Ravi. Leave me a message.",
      'The person you are calling is not available. Please record your message at the tone.',
      'Welcome to the Vodafone voicemail service.',
      'The mailbox is full.',
      "Sorry I can't take your call right now, I'll call you back.",
    ])
      expect(soundsLikeVoicemail(greeting), greeting).to.equal(true);
    for (const words of ['Hello?', 'Yes, speaking.', 'Who is this?', 'He is not available tomorrow.', 'Can you send me a message on WhatsApp?'])
      expect(soundsLikeVoicemail(words), words).to.equal(false);
  });

  it('holds the welcome until a person speaks first; their words are not answered, and a greeting later still finds the machine', async () => {
    const t = screen();
    t.s.start();
    const welcome = t.s.untilWelcome();
    expect(t.s.holdsTheFloor()).to.equal(true);
    expect(t.s.heard('Hello?', true)).to.equal(true); // answered by the welcome
    expect(await welcome).to.equal(false);
    expect(t.s.holdsTheFloor()).to.equal(false);
    expect(t.s.heard('Yes, who is it?', true)).to.equal(false);
    expect(t.s.heard('please leave a message after the', false)).to.equal(true);
    expect(t.found).to.deep.equal(['transcript']);
    expect(t.recorded).to.deep.equal(['machine']);
    t.s.stop();
  });

  it("takes the provider's verdict from the call record: machine ends the hold as a machine", async () => {
    let verdict: AnsweredBy = null;
    const t = screen(() => verdict);
    t.s.start();
    const welcome = t.s.untilWelcome();
    verdict = 'machine';
    expect(await welcome).to.equal(true);
    expect(t.found).to.deep.equal(['provider']);
    expect(t.recorded).to.deep.equal([]);
    t.s.stop();
  });

  it('hears the beep after the greeting (not the tones of speech), and the greeting end without a beep', async () => {
    const t = screen();
    feed(t, encodeMulaw(speakText('Leave a message after the beep.', { sampleRate: 8000 })));
    feed(t, silence(100));
    let over = false;
    const waiting = t.s.untilGreetingEnds(() => over);
    const first = await Promise.race([waiting, new Promise((resolve) => setTimeout(() => resolve('still waiting'), 100))]);
    expect(first).to.equal('still waiting');
    feed(t, tone(1000, 500));
    feed(t, silence(40));
    expect(await waiting).to.equal('beep');

    const quiet = screen();
    feed(quiet, encodeMulaw(speakText('Nobody is home.', { sampleRate: 8000 })));
    feed(quiet, silence(2_100));
    expect(await quiet.s.untilGreetingEnds(() => false)).to.equal('silence');
    over = true;
  });
});
