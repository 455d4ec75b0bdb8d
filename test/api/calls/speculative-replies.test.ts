import { expect } from 'chai';
import { OPEN_HOURS, useCallStack } from '../../support/call-stack';
import { callerLatency } from '../../support/caller-latency';
import type { CallerStep } from '../../../simulators/telephony/simulated-caller';

/**
 * Speculative replies (issue 32, docs/decisions/0227) through the API, the workers, the media
 * service and the simulators: an agent with `transcriber.speculative_replies` asks Flux for
 * early ends of turn, starts the model and the speech on them with the audio held, and plays
 * it when the turn's end confirms the words; a caller who goes on hears nothing of the dropped
 * reply, and its model request is not in the call's usage. Against the same agent without it.
 */
describe('Speculative replies on the early end of turn', function () {
  this.timeout(120_000);
  const stack = useCallStack({ numberPrefix: '+9197' });
  const EOT_MS = 700;
  const EAGER_MS = 150;
  const LLM_MS = 300;
  const TTS_MS = 150;

  before(() => {
    const { recognition, llm, speech } = stack.providers;
    recognition.fluxEndOfTurnMs = EOT_MS;
    recognition.fluxEagerEndOfTurnMs = EAGER_MS;
    llm.latencyMs = LLM_MS;
    speech.latencyMs = TTS_MS;
  });
  after(() => {
    const { recognition, llm, speech } = stack.providers;
    recognition.fluxEndOfTurnMs = null;
    recognition.fluxEagerEndOfTurnMs = null;
    llm.latencyMs = 0;
    speech.latencyMs = 0;
  });

  const agentWith = (speculative: boolean) =>
    stack.createAgent({
      welcome_message: 'Hello, this is Asha.',
      transcriber: { speculative_replies: speculative },
      call: { ...OPEN_HOURS, allow_interruptions: false },
    });

  /** A call where the callee says `lines` (each after the agent spoke), then hangs up: what it heard, the timeline, and the model requests it took. */
  const converse = async (agentId: string, conversation: CallerStep[]) => {
    const { llm, recognition } = stack.providers;
    const requestsBefore = llm.requests.length;
    const sessionsBefore = recognition.sessions.length;
    const to = stack.callee({ kind: 'answer', answerAfterSeconds: 0.2, conversation });
    const placed = await stack.place(agentId, to);
    const { events } = await stack.finished(placed.id);
    const simulated = stack.simulated(to)[0]!;
    const modelRequests = llm.requests.slice(requestsBefore).filter((r) => r.stream);
    return { events, simulated, modelRequests, session: recognition.sessions.slice(sessionsBefore).find((s) => s.path === '/v2/listen')! };
  };

  it('answers each confirmed turn with the reply started early: the model and the speech overlap the end-of-turn wait', async () => {
    const lines = [{ say: 'Where is my order?' }, { say: 'And when will it come?' }, { hangUp: true as const, afterAgentSilenceMs: 300 }];
    const plain = await converse((await agentWith(false)).id, lines);
    const early = await converse((await agentWith(true)).id, lines);

    // Asked for, and given, early ends; the plain agent asked for none.
    expect(plain.session.eagerEotThreshold).to.equal(null);
    expect(early.session.eagerEotThreshold).to.equal(0.5);
    expect(early.session.eagerTurns).to.deep.equal(['Where is my order?', 'And when will it come?']);
    expect(early.session.turnsResumed).to.equal(0);

    // The same words answered, the same number of model requests, all in the usage.
    const answers = (run: typeof plain) => run.simulated.heard.map((h) => h.text).slice(1);
    expect(answers(early)).to.deep.equal(answers(plain));
    expect(answers(early)[0]).to.match(/You said: Where is my order/i);
    expect(early.modelRequests).to.have.length(2);
    const usage = (run: typeof plain) => run.events.find((e) => e.type === 'call.ended')!.data.usage as Record<string, number>;
    expect(usage(early).llm_calls).to.equal(2);
    expect(usage(early).llm_output_tokens).to.be.above(0);

    // The timeline: the model's first token came before the turn ended (latency 0, marked speculative),
    // and the stages after the turn's end leave little: the model's and the speech's shares are gone.
    const firstTokens = early.events.filter((e) => e.type === 'llm.first_token');
    expect(firstTokens.map((e) => e.data.speculative)).to.deep.equal([true, true]);
    const breakdowns = (run: typeof plain) =>
      run.events.filter((e) => e.type === 'tts.first_audio' && !e.data.welcome).map((e) => e.data as Record<string, number>);
    for (const d of breakdowns(early)) {
      expect(d.model_first_token_ms).to.equal(0);
      expect(d.speech_first_byte_ms).to.be.below(TTS_MS);
    }
    for (const d of breakdowns(plain)) expect(d.model_first_token_ms).to.be.at.least(LLM_MS - 5);

    // What the callee heard: every answer sooner, by at least the model's first token.
    const plainHeard = callerLatency(plain.simulated).voiceToVoiceMs;
    const earlyHeard = callerLatency(early.simulated).voiceToVoiceMs;
    expect(plainHeard).to.have.length(2);
    expect(earlyHeard).to.have.length(2);
    earlyHeard.forEach((ms, i) => expect(plainHeard[i]! - ms, `turn ${i + 1}: ${plainHeard[i]} ms plain, ${ms} ms early`).to.be.at.least(LLM_MS));
  });

  it('drops the reply when the caller goes on: nothing of it is heard, and its model request is not in the usage', async () => {
    const early = await converse((await agentWith(true)).id, [
      { say: 'I want to book' },
      // A pause longer than the early end's silence, shorter than the end of turn's: Flux's TurnResumed.
      { pauseMs: 350 },
      { say: 'a table for two.', unprompted: true },
      { hangUp: true, afterAgentSilenceMs: 300 },
    ]);
    expect(early.session.eagerTurns).to.deep.equal(['I want to book', 'I want to book a table for two.']);
    expect(early.session.turnsResumed).to.equal(1);
    // The model was asked twice: about the words before the pause (dropped) and about the whole turn.
    const lastUser = (r: (typeof early.modelRequests)[number]) => JSON.stringify(r.messages.at(-1));
    expect(early.modelRequests.map(lastUser)).to.have.length(2);
    expect(lastUser(early.modelRequests[0]!)).to.include('I want to book"');
    expect(lastUser(early.modelRequests[1]!)).to.include('I want to book a table for two');

    const heard = early.simulated.heard.map((h) => h.text);
    expect(heard.slice(1)).to.have.length(1);
    expect(heard[1]).to.match(/You said: I want to book a table for two/i);
    expect(heard.join(' ')).to.not.match(/You said: I want to book\. /i);
    const turns = early.events.filter((e) => e.type === 'user.turn').map((e) => e.message);
    expect(turns).to.deep.equal(['I want to book a table for two.']);
    const replies = early.events.filter((e) => e.type === 'agent.reply').map((e) => e.message);
    expect(replies).to.have.length(1);
    expect(replies[0]).to.match(/You said: I want to book a table for two/i);
    // The dropped request is the platform's cost, not the call's.
    expect((early.events.find((e) => e.type === 'call.ended')!.data.usage as Record<string, number>).llm_calls).to.equal(1);
  });
});
