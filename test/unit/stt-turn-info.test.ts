import { expect } from 'chai';
import { EOT_THRESHOLDS, eagerEotThreshold, listenUrl, TurnInfoReader } from '../../providers/stt/deepgram-style';
import type { RecognitionHandlers, RecognitionSettings } from '../../providers/stt/types';
import { fluxLifecycle, turnInfo } from '../fixtures/deepgram/messages';

/** Every handler call, in order, as one line each. */
function recorder(withEagerHandlers = true): { calls: string[]; handlers: RecognitionHandlers } {
  const calls: string[] = [];
  const handlers: RecognitionHandlers = {
    onInterim: (text) => calls.push(`interim ${text}`),
    onTurnEnd: ({ text, language, turnIndex }) => calls.push(`end ${turnIndex} ${language} ${text}`),
    onError: (error) => calls.push(`error ${error.message}`),
  };
  if (withEagerHandlers) {
    handlers.onEagerTurnEnd = ({ text, language, turnIndex }) => calls.push(`eager ${turnIndex} ${language} ${text}`);
    handlers.onTurnResumed = ({ turnIndex }) => calls.push(`resumed ${turnIndex}`);
  }
  return { calls, handlers };
}

function read(messages: object[], withEagerHandlers = true): string[] {
  const { calls, handlers } = recorder(withEagerHandlers);
  const reader = new TurnInfoReader(handlers);
  for (const message of messages) reader.read(message);
  return calls.filter((call) => !call.startsWith('interim'));
}

/** Flux's TurnInfo reader (providers/stt/deepgram-style.ts) on the documented messages, without a socket. */
describe('Flux TurnInfo reader: early end of turn', () => {
  it('tells an early end, then the end of the same turn with the same text', () => {
    const calls = read([
      turnInfo('StartOfTurn', 0, 'Cancel my', 1, ['en']),
      turnInfo('EagerEndOfTurn', 0, 'Cancel my booking', 2, ['en']),
      turnInfo('EndOfTurn', 0, 'Cancel my booking', 3, ['en']),
    ]);
    expect(calls).to.deep.equal(['eager 0 en Cancel my booking', 'end 0 en Cancel my booking']);
  });

  it("follows the Flux state page's lifecycle: early end, resumption, a longer early end, its end, then the next turn", () => {
    const calls = read([...fluxLifecycle(['en']), turnInfo('StartOfTurn', 1, 'Thanks', 8), turnInfo('EndOfTurn', 1, 'Thanks', 9)]);
    expect(calls).to.deep.equal([
      'eager 0 en Hi I need to cancel',
      'resumed 0',
      'eager 0 en Hi I need to cancel my subscription please',
      'end 0 en Hi I need to cancel my subscription please',
      'end 1 null Thanks',
    ]);
  });

  it('still tells the words of an early end and of a resumption as interim text', () => {
    const { calls, handlers } = recorder();
    const reader = new TurnInfoReader(handlers);
    for (const message of fluxLifecycle()) reader.read(message);
    expect(calls).to.include.members(['interim Hi I need to cancel', 'interim Hi I need to cancel my']);
  });

  it('voids the early end when the end of turn says other words (no reply for words not said)', () => {
    const calls = read([turnInfo('EagerEndOfTurn', 0, 'I want to', 1), turnInfo('EndOfTurn', 0, 'I want to go', 2)]);
    expect(calls).to.deep.equal(['eager 0 null I want to', 'resumed 0', 'end 0 null I want to go']);
  });

  it('voids an early end that a second one with other words replaces without a resumption', () => {
    const calls = read([turnInfo('EagerEndOfTurn', 0, 'Yes', 1), turnInfo('EagerEndOfTurn', 0, 'Yes please', 2), turnInfo('EndOfTurn', 0, 'Yes please', 3)]);
    expect(calls).to.deep.equal(['eager 0 null Yes', 'resumed 0', 'eager 0 null Yes please', 'end 0 null Yes please']);
  });

  it('tells a repeated early end with the same words once', () => {
    const calls = read([turnInfo('EagerEndOfTurn', 0, 'Yes', 1), turnInfo('EagerEndOfTurn', 0, 'Yes', 2), turnInfo('EndOfTurn', 0, 'Yes', 3)]);
    expect(calls).to.deep.equal(['eager 0 null Yes', 'end 0 null Yes']);
  });

  it('tells a resumption only after an early end, and ends a turn once', () => {
    const calls = read([
      turnInfo('TurnResumed', 0, 'Hello', 1),
      turnInfo('EndOfTurn', 0, 'Hello', 2),
      turnInfo('EndOfTurn', 0, 'Hello', 3),
      turnInfo('EagerEndOfTurn', 0, 'Hello', 4),
      turnInfo('TurnResumed', 0, 'Hello', 5),
    ]);
    expect(calls).to.deep.equal(['end 0 null Hello']);
  });

  it('ignores an empty early end (Flux documents them never empty)', () => {
    expect(read([turnInfo('EagerEndOfTurn', 0, '', 1), turnInfo('EndOfTurn', 0, 'Hi', 2)])).to.deep.equal(['end 0 null Hi']);
  });

  it('works unchanged for handlers without the early-end ones', () => {
    expect(read(fluxLifecycle(['en']), false)).to.deep.equal(['end 0 en Hi I need to cancel my subscription please']);
  });
});

describe('eager_eot_threshold in the listen URL', () => {
  const settings = (fields: Partial<RecognitionSettings>): RecognitionSettings => ({
    provider: 'provider_a',
    model: 'flux-general-multi',
    language: 'en-IN',
    turnDetection: 'balanced',
    endpointingMs: 300,
    keyterms: [],
    ...fields,
  });
  const query = (fields: Partial<RecognitionSettings>) => new URL(listenUrl('wss://api.example.com', settings(fields))).searchParams;

  it('is sent on Flux only when asked, never above eot_threshold', () => {
    expect(query({}).has('eager_eot_threshold')).to.equal(false);
    expect(query({ eagerEndOfTurnThreshold: 0.4 }).get('eager_eot_threshold')).to.equal('0.4');
    expect(query({ eagerEndOfTurnThreshold: 0.9, turnDetection: 'responsive' }).get('eager_eot_threshold')).to.equal(String(EOT_THRESHOLDS.responsive));
    expect(query({ provider: 'provider_b', model: 'nova-3', eagerEndOfTurnThreshold: 0.4 }).has('eager_eot_threshold')).to.equal(false);
  });

  it("refuses a threshold outside Flux's 0.3 to 0.9", () => {
    expect(() => eagerEotThreshold(0.2, 0.7)).to.throw(RangeError, /between 0.3 and 0.9/);
    expect(() => eagerEotThreshold(Number.NaN, 0.7)).to.throw(RangeError);
    expect(() => query({ eagerEndOfTurnThreshold: 0.95 })).to.throw(RangeError);
    expect(eagerEotThreshold(0.3, 0.5)).to.equal(0.3);
  });
});
