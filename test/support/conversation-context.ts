import { agentDefaults } from '../../domain/agents/catalog';
import type { AgentTool } from '../../db/models/agent';
import type { HttpToolRun } from '../../providers/http-tools/http-tool';
import { SYNTHESIS_SAMPLE_RATE } from '../../providers/tts/types';
import type { CallAudioStream } from '../../media/conversation/audio-stream';
import type { ConversationContext } from '../../media/conversation/context';
import { AgentSpeech } from '../../media/conversation/speech';
import { ConversationState } from '../../media/conversation/state';
import type { ConversationAgent, ConversationDeps, ConversationEvent } from '../../media/conversation/types';

/**
 * A conversation's context (media/conversation/context.ts) for unit tests of the engine's
 * collaborators: the real state and speech, driven with plain inputs: a default agent, an
 * audio stream that records what is played and marks everything played at once, a
 * synthesizer that answers 10 ms of silence per character, and the events emitted.
 */
export function conversationContext(options: { call?: Partial<ConversationAgent['call']>; tools?: AgentTool[]; deps?: Partial<ConversationDeps> } = {}) {
  const defaults = agentDefaults();
  const agent: ConversationAgent = {
    welcome_message: '',
    system_prompt: defaults.system_prompt,
    llm: defaults.llm,
    voice: defaults.voice,
    transcriber: defaults.transcriber,
    call: { ...defaults.call, ...options.call },
    knowledge_base_ids: [],
    tools: options.tools ?? [],
  };
  const events: ConversationEvent[] = [];
  const played: Buffer[] = [];
  const cleared: number[] = [];
  const digitListeners: ((digit: string) => void)[] = [];
  const audioListeners: ((mulaw: Buffer) => void)[] = [];
  const playedListeners: ((name: string) => void)[] = [];
  const audio: CallAudioStream = {
    streamId: 'test-stream',
    onAudio: (listener) => void audioListeners.push(listener),
    play: (mulaw) => void played.push(mulaw),
    mark: (name) => setImmediate(() => playedListeners.forEach((l) => l(name))),
    onPlayed: (listener) => void playedListeners.push(listener),
    clear: () => void cleared.push(Date.now()),
    onClose: () => undefined,
    close: () => undefined,
    onDigits: (listener) => void digitListeners.push(listener),
  };
  const deps: ConversationDeps = {
    audio,
    transcriber: { open: () => Promise.reject(new Error('no recognition in unit tests')) } as unknown as ConversationDeps['transcriber'],
    languageModel: {
      stream: () => (async function* () {})(),
      complete: () => Promise.reject(new Error('no model in this test')),
    } as unknown as ConversationDeps['languageModel'],
    synthesizer: {
      listVoices: async () => [],
      async *synthesize(request) {
        yield Buffer.alloc(((SYNTHESIS_SAMPLE_RATE * 2) / 100) * request.text.length);
      },
    },
    runTool: () => Promise.reject(new Error('no tools in this test')),
    retrieve: async () => [],
    emit: (event) => void events.push(event),
    now: () => Date.now(),
    ...options.deps,
  };
  const state = new ConversationState(deps);
  state.startedAtMs = deps.now();
  state.lastActivityMs = state.startedAtMs;
  const conversationOptions = { agent, userData: {}, capSeconds: 600, capReason: 'max duration reached', signal: new AbortController().signal };
  const speech = new AgentSpeech(conversationOptions, deps, state);
  audio.onPlayed((name) => speech.played(name));
  const ctx: ConversationContext = { options: conversationOptions, deps, state, speech };
  return {
    ctx,
    agent,
    events,
    played,
    cleared,
    /** The event types emitted, in order. */
    types: () => events.map((e) => e.type),
    pressDigit: (digit: string) => digitListeners.forEach((l) => l(digit)),
    hear: (mulaw: Buffer) => audioListeners.forEach((l) => l(mulaw)),
  };
}

/** An HTTP tool's answer, as providers/http-tools/http-tool.ts reports it. */
export function toolRun(run: Partial<HttpToolRun>): HttpToolRun {
  return {
    ok: true,
    status: 200,
    latency_ms: 5,
    result: '{}',
    truncated: false,
    location: null,
    error: null,
    request: { method: 'POST', url: 'https://tools.example.com/x' },
    ...run,
  };
}

export function tool(name: string, extra: Partial<AgentTool> = {}): AgentTool {
  return {
    name,
    description: `the ${name} tool`,
    parameters: { type: 'object', properties: {} },
    method: 'POST',
    url: `https://tools.example.com/${name}`,
    headers: {},
    pre_call_message: '',
    timeout_seconds: 5,
    ...extra,
  };
}
