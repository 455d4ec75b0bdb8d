import { randomInt } from 'node:crypto';
import type { ProvidersConfig } from '../../config/env';
import { simulatedLanguageModels } from '../../scripts/infra/simulators';
import { holdNumbers } from './accounts';
import { startTelephonySimulator, type TelephonySimulator } from '../../simulators/telephony/simulator';
import { startSpeechSimulator, type SpeechSimulator } from '../../simulators/tts/simulator';
import { startLanguageModelSimulator, type LanguageModelSimulator } from '../../simulators/llm/simulator';
import { startRecognitionSimulator, type RecognitionSimulator } from '../../simulators/stt/simulator';

export interface TestProviders {
  telephony: TelephonySimulator;
  speech: SpeechSimulator;
  llm: LanguageModelSimulator;
  recognition: RecognitionSimulator;
  /** The numbers the telephony simulator's account rents, in its order. */
  pool: string[];
  /** For `startApi({ providers })`. */
  config: ProvidersConfig;
  /**
   * A caller number of the pool held by the workspace (calls are placed only from numbers the
   * workspace holds): the first workspace to ask gets pool[0], the next pool[1], and so on;
   * asking again answers the same number.
   */
  callerFor(workspaceId: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * The simulators of the outside services on free ports, for one test file. The telephony
 * pool holds `poolSize` random Indian numbers, so that files sharing the database never
 * claim the same number.
 */
export async function startTestProviders(options: { poolSize?: number; timeoutMs?: number; timeScale?: number } = {}): Promise<TestProviders> {
  const pool = randomNumbers(options.poolSize ?? 10);
  // timeScale below 1 plays the callees' scripts faster (0.05: a 20 s conversation takes 1 s).
  const telephony = await startTelephonySimulator({ numbers: pool, timeScale: options.timeScale });
  const speech = await startSpeechSimulator();
  const llm = await startLanguageModelSimulator();
  const recognition = await startRecognitionSimulator();
  const callers = new Map<string, Promise<string>>();
  const callerFor = (workspaceId: string): Promise<string> => {
    let caller = callers.get(workspaceId);
    if (!caller) {
      const number = pool[callers.size];
      if (!number) throw new Error(`the telephony pool has ${pool.length} numbers, fewer than the workspaces placing calls`);
      caller = holdNumbers(workspaceId, number).then(() => number);
      callers.set(workspaceId, caller);
    }
    return caller;
  };
  return {
    telephony,
    speech,
    llm,
    recognition,
    pool,
    callerFor,
    config: {
      telephony: { baseUrl: telephony.url, authId: telephony.authId, authToken: telephony.authToken },
      tts: { baseUrl: speech.url, apiKey: speech.apiKey },
      llm: simulatedLanguageModels(llm.url, llm.apiKey),
      stt: { baseUrl: recognition.url, apiKey: recognition.apiKey },
      timeoutMs: options.timeoutMs ?? 1_000,
    },
    close: async () => {
      await telephony.close();
      await speech.close();
      await llm.close();
      await recognition.close();
    },
  };
}

/** Distinct E.164 numbers under +91 80 with random subscriber digits. */
export function randomNumbers(count: number): string[] {
  const numbers = new Set<string>();
  while (numbers.size < count) numbers.add(`+9180${String(randomInt(0, 100_000_000)).padStart(8, '0')}`);
  return [...numbers];
}
