import { expect } from 'chai';
import type { CalleeScript, SimulatedCall } from '../../simulators/telephony/simulator';
import { agentsClient } from '../api/agents/helpers';
import { activeOwner, withJson, type SignedUp } from './accounts';
import { startApi, type RunningApi } from './api';
import type { ProvidersConfig } from '../../config/env';
import { randomNumbers, startTestProviders, type TestProviders } from './providers';
import { until } from './until';

/** Calling hours open all day, so that placed calls are dialled at once. */
export const OPEN_HOURS = { call_start_hour: 0, call_end_hour: 24, timezone: 'UTC' };

/** A call as `GET /calls/{id}` answers it; each test file names the fields it reads. */
export type CallRecord = Record<string, unknown> & { id: string; status: string };
export type TimelineEntry = { type: string; message: string; level: string; latency_ms: number | null; data: Record<string, unknown> };

export interface CallStack {
  readonly providers: TestProviders;
  readonly api: RunningApi;
  /** The owner of an active workspace that holds a caller number of the simulator's pool. */
  readonly owner: SignedUp;
  /** A fresh number whose simulated callee follows `script`. */
  callee(script: CalleeScript): string;
  /** Creates an agent (name Asha, an Indian English voice, then `settings`) and answers its body. */
  createAgent(settings: Record<string, unknown>): Promise<Record<string, unknown> & { id: string; call: Record<string, unknown> }>;
  /** `POST /calls` from the workspace's number; fails the test unless 201. */
  place<C extends CallRecord = CallRecord>(agentId: string, to: string, userData?: Record<string, unknown>): Promise<C>;
  getCall<C extends CallRecord = CallRecord>(id: string): Promise<C>;
  timeline(id: string): Promise<TimelineEntry[]>;
  /** Waits for `call.completed` (analytics done), then answers the record and the timeline. */
  finished<C extends CallRecord = CallRecord>(id: string): Promise<{ call: C; events: TimelineEntry[] }>;
  /** The simulator's calls to `to`, oldest first. */
  simulated(to: string): SimulatedCall[];
}

/**
 * The stack of an end-to-end call test file: the simulators of the outside services, the real
 * API with the calls, webhooks and analytics workers and the media service, and an active
 * workspace's owner. Call it inside `describe`: it registers the file's `before` and `after`.
 * `numberPrefix` replaces the pool's `+9180` in callee numbers, so that files sharing the
 * database and Temporal server never script the same callee.
 */
export function useCallStack(options: {
  numberPrefix: string;
  timeScale?: number;
  /** The services' settings from the simulators (default: theirs as they are), e.g. to point a provider elsewhere. */
  providersConfig?: (providers: TestProviders) => ProvidersConfig | Promise<ProvidersConfig>;
}): CallStack {
  let providers: TestProviders | undefined;
  let api: RunningApi | undefined;
  let owner: SignedUp | undefined;
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the call stack is used before its before() hook ran');
    return value;
  };

  before(async () => {
    providers = await startTestProviders({ timeScale: options.timeScale ?? 0.05 });
    const config = options.providersConfig ? await options.providersConfig(providers) : providers.config;
    api = await startApi({ workers: ['calls', 'webhooks', 'analytics'], providers: config, media: true });
    owner = await activeOwner(api, { name: 'Asha Rao' });
    await providers.callerFor(owner.workspaceId);
  });
  after(async () => {
    await api?.close();
    await providers?.close();
  });

  const stack: CallStack = {
    get providers() {
      return started(providers);
    },
    get api() {
      return started(api);
    },
    get owner() {
      return started(owner);
    },
    callee(script) {
      const [number] = randomNumbers(1).map((n) => n.replace('+9180', options.numberPrefix));
      stack.providers.telephony.setCallee(number!, script);
      return number!;
    },
    createAgent: (settings) =>
      agentsClient(stack.api, stack.owner.auth).created({ name: 'Asha', voice: { voice_id: 'meera', language: 'en-IN' }, ...settings }),
    async place<C extends CallRecord>(agentId: string, to: string, userData?: Record<string, unknown>) {
      const body = {
        agent_id: agentId,
        to_number: to,
        from_number: await stack.providers.callerFor(stack.owner.workspaceId),
        ...(userData ? { user_data: userData } : {}),
      };
      const res = await stack.api.request('/api/v1/calls', withJson('POST', body, stack.owner.auth));
      expect(res.status, await res.clone().text()).to.equal(201);
      return (await res.json()) as C;
    },
    async getCall<C extends CallRecord>(id: string) {
      return (await (await stack.api.request(`/api/v1/calls/${id}`, { headers: stack.owner.auth })).json()) as C;
    },
    async timeline(id) {
      return (await stack.api.request(`/api/v1/calls/${id}/events`, { headers: stack.owner.auth })).json();
    },
    async finished<C extends CallRecord>(id: string) {
      const events = await until(
        () => stack.timeline(id),
        (list) => list.some((e) => e.type === 'call.completed'),
        90_000,
      );
      return { call: await stack.getCall<C>(id), events };
    },
    simulated: (to) => stack.providers.telephony.calls().filter((c) => c.to === to),
  };
  return stack;
}
