import { SIMULATOR_AUTH_ID, SIMULATOR_AUTH_TOKEN, startTelephonySimulator, type TelephonySimulator } from '../../simulators/telephony/simulator';
import { SIMULATOR_API_KEY, startSpeechSimulator } from '../../simulators/tts/simulator';
import type { RunningSimulator } from '../../simulators/simulated-service';
import { KEYPAD_DEMO_CALLEES, TRANSFER_DEMO_CALLEES, VOICEMAIL_DEMO_CALLEES } from '../../simulators/telephony/demo-callees';
import { LLM_SIMULATOR_API_KEY, startLanguageModelSimulator } from '../../simulators/llm/simulator';
import { RECOGNITION_SIMULATOR_API_KEY, startRecognitionSimulator } from '../../simulators/stt/simulator';
import { DEFAULT_AZURE_API_VERSION, languageModelsEnv, type LanguageModelsConfig } from '../../config/env';
import {
  PAYMENT_SIMULATOR_KEY_ID,
  PAYMENT_SIMULATOR_KEY_SECRET,
  PAYMENT_SIMULATOR_WEBHOOK_SECRET,
  startPaymentSimulator,
  type PaymentSimulator,
} from '../../simulators/payments/simulator';

export interface LocalSimulators {
  /** Variables that point the services at the simulators (TELEPHONY_BASE_URL, ...). */
  env: Record<string, string>;
  /** One line per simulator for the launcher's banner. */
  lines: string[];
  /** The telephony simulator, when started (the launcher points its inbound calls at the API). */
  telephony?: TelephonySimulator;
  /** The payment simulator, when started (the launcher points its webhooks at the API). */
  payments?: PaymentSimulator;
  close(): Promise<void>;
}

/**
 * Every language-model provider at one simulator, each in its own dialect: OpenAI's `/v1` with
 * a Bearer key, Azure's deployment paths (deployments named like the models) with `api-key`,
 * and a compatible server that takes the catalog's model names.
 */
export function simulatedLanguageModels(url: string, apiKey: string): LanguageModelsConfig {
  return {
    openai: { baseUrl: `${url}/v1`, apiKey },
    azureOpenai: { endpoint: url, apiKey, apiVersion: DEFAULT_AZURE_API_VERSION, deployments: {}, deployment: null },
    local: { baseUrl: url, apiKey, model: null },
  };
}

/**
 * The simulators of the outside services whose base URL `env` leaves unset, on free loopback
 * ports inside the launcher's process (they are small HTTP servers; the API, workers and
 * media service all reach the same ones through the variables in `env`).
 */
export async function startLocalSimulators(env: NodeJS.ProcessEnv): Promise<LocalSimulators> {
  const running: RunningSimulator[] = [];
  const result: LocalSimulators = { env: {}, lines: [], close: () => Promise.all(running.map((s) => s.close())).then(() => undefined) };
  if (!env.TELEPHONY_BASE_URL) {
    // Callees at fixed numbers that play the other side of a feature (see the README).
    const telephony = await startTelephonySimulator({ callees: { ...KEYPAD_DEMO_CALLEES, ...VOICEMAIL_DEMO_CALLEES, ...TRANSFER_DEMO_CALLEES } });
    running.push(telephony);
    result.telephony = telephony;
    Object.assign(result.env, { TELEPHONY_BASE_URL: telephony.url, PLIVO_AUTH_ID: SIMULATOR_AUTH_ID, PLIVO_AUTH_TOKEN: SIMULATOR_AUTH_TOKEN });
    result.lines.push(`  Telephony    ${telephony.url} (Plivo simulator; TELEPHONY_BASE_URL to use a real account)`);
  }
  if (!env.TTS_BASE_URL) {
    const speech = await startSpeechSimulator();
    running.push(speech);
    Object.assign(result.env, { TTS_BASE_URL: speech.url, TTS_API_KEY: SIMULATOR_API_KEY });
    result.lines.push(`  Speech       ${speech.url} (speech-synthesis simulator; TTS_BASE_URL to use a real server)`);
  }
  // Each language-model provider left unset is answered by one simulator, in its own dialect.
  const unset = { openai: !env.LLM_OPENAI_API_KEY, azureOpenai: !env.LLM_AZURE_ENDPOINT, local: !env.LLM_LOCAL_BASE_URL };
  if (unset.openai || unset.azureOpenai || unset.local) {
    const llm = await startLanguageModelSimulator({ latencyMs: 200 });
    running.push(llm);
    const simulated = simulatedLanguageModels(llm.url, LLM_SIMULATOR_API_KEY);
    Object.assign(
      result.env,
      languageModelsEnv({
        openai: unset.openai ? simulated.openai : null,
        azureOpenai: unset.azureOpenai ? simulated.azureOpenai : null,
        local: unset.local ? simulated.local : null,
      }),
    );
    const names = [unset.openai && 'openai', unset.azureOpenai && 'azure_openai', unset.local && 'local'].filter(Boolean).join(', ');
    result.lines.push(
      `  Language     ${llm.url} (language-model simulator for ${names}; LLM_OPENAI_API_KEY, LLM_AZURE_ENDPOINT, LLM_LOCAL_BASE_URL to use real ones)`,
    );
  }
  if (!env.STT_BASE_URL) {
    const recognition = await startRecognitionSimulator({ latencyMs: 100 });
    running.push(recognition);
    Object.assign(result.env, { STT_BASE_URL: recognition.url, STT_API_KEY: RECOGNITION_SIMULATOR_API_KEY });
    result.lines.push(`  Recognition  ${recognition.url} (speech-recognition simulator; STT_BASE_URL to use a real server)`);
  }
  if (!env.PAYMENTS_BASE_URL) {
    const payments = await startPaymentSimulator();
    running.push(payments);
    result.payments = payments;
    Object.assign(result.env, {
      PAYMENTS_BASE_URL: payments.url,
      RAZORPAY_KEY_ID: PAYMENT_SIMULATOR_KEY_ID,
      RAZORPAY_KEY_SECRET: PAYMENT_SIMULATOR_KEY_SECRET,
      RAZORPAY_WEBHOOK_SECRET: PAYMENT_SIMULATOR_WEBHOOK_SECRET,
    });
    result.lines.push(`  Payments     ${payments.url} (Razorpay simulator; PAYMENTS_BASE_URL to use a real account)`);
  }
  return result;
}
