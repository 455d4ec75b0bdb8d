import { startLanguageModelSimulator } from '../../simulators/llm/simulator';
import { startRecognitionSimulator } from '../../simulators/stt/simulator';
import { startTelephonySimulator, type CalleeScript } from '../../simulators/telephony/simulator';
import { startSpeechSimulator } from '../../simulators/tts/simulator';
import { tuneHeapForLiveAudio } from '../../media/heap-tuning';
import { calleeSilence } from '../support/callee-silence';
import { callerLatency } from '../support/caller-latency';

/**
 * The outside services' simulators in a process of their own, as the real services would be:
 * the calls benchmark measures our pipeline, and simulators sharing its event loop would
 * add their own delays to it. Controlled over IPC (`process.send`).
 */
export type SimulatorCommand =
  | { type: 'callees'; numbers: string[]; script: CalleeScript }
  | {
      type: 'configure';
      llmLatencyMs?: number;
      tokenIntervalMs?: number;
      replyText?: string;
      ttsLatencyMs?: number;
      sttLatencyMs?: number;
      /** Flux's end-of-turn silence (null: derived from eot_threshold). */
      fluxEndOfTurnMs?: number | null;
      fluxEagerEndOfTurnMs?: number | null;
      /** The telephony leg's one-way delay of the streams opened from now on. */
      legDelayMs?: number;
    }
  | { type: 'silences'; numbers: string[] }
  | { type: 'latencies'; numbers: string[] }
  /** How many streamed chat completions (conversation replies) the model has been asked for so far. */
  | { type: 'modelRequests' }
  | { type: 'close' };

export interface SimulatorsReady {
  type: 'ready';
  telephony: { url: string; authId: string; authToken: string };
  tts: { url: string; apiKey: string };
  llm: { url: string; apiKey: string };
  stt: { url: string; apiKey: string };
  pool: string[];
}

async function main(): Promise<void> {
  // The simulators stream audio for 50 calls too: the same tuning keeps their collections from adding delays to ours.
  tuneHeapForLiveAudio();
  const pool = JSON.parse(process.env.SIMULATED_NUMBERS ?? '[]') as string[];
  const telephony = await startTelephonySimulator({ numbers: pool });
  const speech = await startSpeechSimulator();
  const llm = await startLanguageModelSimulator();
  const recognition = await startRecognitionSimulator();
  process.on('message', (command: SimulatorCommand) => {
    if (command.type === 'callees') for (const number of command.numbers) telephony.setCallee(number, command.script);
    if (command.type === 'configure') {
      if (command.llmLatencyMs !== undefined) llm.latencyMs = command.llmLatencyMs;
      if (command.tokenIntervalMs !== undefined) llm.tokenIntervalMs = command.tokenIntervalMs;
      if (command.replyText !== undefined) {
        const text = command.replyText;
        llm.respond = () => ({ text });
      }
      if (command.ttsLatencyMs !== undefined) speech.latencyMs = command.ttsLatencyMs;
      if (command.sttLatencyMs !== undefined) recognition.latencyMs = command.sttLatencyMs;
      if (command.fluxEndOfTurnMs !== undefined) recognition.fluxEndOfTurnMs = command.fluxEndOfTurnMs;
      if (command.fluxEagerEndOfTurnMs !== undefined) recognition.fluxEagerEndOfTurnMs = command.fluxEagerEndOfTurnMs;
      if (command.legDelayMs !== undefined) telephony.setLegDelay(command.legDelayMs);
    }
    if (command.type === 'silences') {
      const silences = telephony
        .calls()
        .filter((c) => command.numbers.includes(c.to))
        .map(calleeSilence);
      process.send?.({ type: 'done', silences });
      return;
    }
    if (command.type === 'latencies') {
      // Per number, its (last) call: what its callee heard, and when its stream opened after the answer.
      const latencies = command.numbers.map((number) => {
        const call = telephony
          .calls()
          .filter((c) => c.to === number)
          .at(-1);
        return call ? { ...callerLatency(call), silence: calleeSilence(call) } : null;
      });
      process.send?.({ type: 'done', latencies });
      return;
    }
    if (command.type === 'modelRequests') {
      process.send?.({ type: 'done', modelRequests: llm.requests.filter((r) => r.stream).length });
      return;
    }
    if (command.type === 'close') {
      void Promise.all([telephony.close(), speech.close(), llm.close(), recognition.close()]).then(() => process.exit(0));
      return;
    }
    process.send?.({ type: 'done' });
  });
  const ready: SimulatorsReady = {
    type: 'ready',
    telephony: { url: telephony.url, authId: telephony.authId, authToken: telephony.authToken },
    tts: { url: speech.url, apiKey: speech.apiKey },
    llm: { url: llm.url, apiKey: llm.apiKey },
    stt: { url: recognition.url, apiKey: recognition.apiKey },
    pool,
  };
  process.send?.(ready);
}

main().catch((error) => {
  console.error('simulators failed:', error);
  process.exit(1);
});
