import type { ConversationContext } from './context';
import { providerOf } from './helpers';
import { VoicemailScreen, type DetectedBy, type VoicemailDeps } from './voicemail';
import { fillVariables } from '../../domain/agents/variables';

/**
 * Voicemail in a conversation (docs/decisions/0158): screens an outbound call (./voicemail.ts)
 * and answers a machine with `call.voicemail.action`.
 */
export class VoicemailAnswer {
  /** The screening of the call; null when the call is not screened. */
  screen: VoicemailScreen | null = null;

  /** `dropTurns` forgets the caller turns waiting for an answer (a machine's words are not answered). */
  constructor(
    private readonly ctx: ConversationContext,
    private readonly dropTurns: () => void,
  ) {}

  /** Starts screening the call: the provider's verdict, the callee's first words and audio. */
  start(deps: VoicemailDeps): VoicemailScreen {
    const screen = new VoicemailScreen(
      this.ctx.options.agent.call.voicemail,
      deps,
      () => this.ctx.deps.now(),
      (by) => void this.answerMachine(by),
    );
    this.screen = screen;
    this.ctx.deps.audio.onAudio((mulaw) => screen.hearAudio(mulaw));
    screen.start();
    return screen;
  }

  /**
   * A machine answered: whatever the agent is saying stops, `call.voicemail`, then the action:
   * `hang_up` ends the call now; `leave_message` waits for the greeting's beep (or its end), says
   * the message (not interruptible) and ends once it has played. Both end with `voicemail`.
   */
  async answerMachine(detectedBy: DetectedBy): Promise<void> {
    const { options, deps, state, speech } = this.ctx;
    if (state.ending) return;
    const { action, message } = options.agent.call.voicemail;
    const reply = state.reply;
    if (reply && !reply.abort.signal.aborted) {
      if (speech.playback.playing(deps.now())) {
        deps.audio.clear();
        speech.playback.stop(deps.now());
      }
      reply.interrupted = true;
      reply.abort.abort();
    }
    this.dropTurns();
    const found = detectedBy === 'provider' ? "the provider's answering-machine detection" : 'the greeting in the transcript';
    deps.emit({
      type: 'call.voicemail',
      message: `an answering machine answered (${found}); ${action === 'hang_up' ? 'hanging up' : 'leaving the message after the beep'}`,
      level: 'info',
      latencyMs: null,
      data: { detected_by: detectedBy, action },
    });
    if (action === 'hang_up') return state.end('agent', 'voicemail', 'info');
    try {
      await this.screen!.untilGreetingEnds(() => state.ending !== null);
      if (state.ending) return;
      const text = fillVariables(message, options.userData);
      const said = speech.start(false);
      const saying = speech.queue(said, null);
      saying.say(text);
      await saying.finished();
      speech.end(said);
      await speech.untilFarEndPlayed(said);
      state.end('agent', 'voicemail', 'info');
    } catch (error) {
      state.fail(providerOf(error), error);
    }
  }
}
