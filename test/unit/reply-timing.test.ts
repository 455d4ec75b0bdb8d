import { expect } from 'chai';
import { ReplyTiming } from '../../media/conversation/turn-timing';

describe("a reply's wait split into stages (media/conversation/turn-timing.ts)", () => {
  // The caller's last sound at 1 000; the recognizer decided 300 ms later, its message arrived 30 ms after that: the turn is known at 1 330.
  const turn = { voiceEndedAtMs: 1_000, endOfTurnMs: 300, recogniserMs: 30 };

  it('an ordinary reply: each stage from its own start, ours the rest', () => {
    const timing = new ReplyTiming(turn);
    timing.modelRequested(1_335);
    timing.modelFirstToken(1_735);
    timing.sentence(1_800);
    timing.synthesisStarted(1_800);
    expect(timing.breakdown(2_100)).to.deep.equal({
      end_of_turn_ms: 300,
      recogniser_ms: 30,
      model_first_token_ms: 400,
      model_first_sentence_ms: 65,
      speech_first_byte_ms: 300,
      ours_ms: 5,
      voice_to_voice_ms: 1_100,
    });
  });

  it("a speculative reply: what it did before the turn was known is not the caller's wait", () => {
    const timing = new ReplyTiming(null);
    // Started on the early end at 1 150: the first token at 1 250, the sentence at 1 300, the speech's first byte at 1 500.
    timing.modelRequested(1_150);
    timing.modelFirstToken(1_250);
    timing.sentence(1_300);
    timing.synthesisStarted(1_300);
    expect(timing.breakdown(1_600), 'unknown until confirmed').to.equal(null);
    timing.confirm(turn);
    // Kept at 1 330 with its audio already there: it goes out at 1 331.
    expect(timing.breakdown(1_331)).to.deep.equal({
      end_of_turn_ms: 300,
      recogniser_ms: 30,
      model_first_token_ms: 0,
      model_first_sentence_ms: 0,
      speech_first_byte_ms: 1,
      ours_ms: 0,
      voice_to_voice_ms: 331,
    });
  });
});
