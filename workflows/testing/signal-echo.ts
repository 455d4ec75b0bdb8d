import { condition, defineSignal, getExternalWorkflowHandle, setHandler } from '@temporalio/workflow';

/**
 * The baseline of the slot handoff benchmark: a bare signal round trip through the server.
 * `signalEchoWorkflow` passes each `ping` on to the workflow it names, as the slot keeper
 * passes a released slot on to the next call; `signalWaiterWorkflow` ends on that signal.
 */
export const pingSignal = defineSignal<[{ replyTo: string }]>('ping');
export const pongSignal = defineSignal('pong');

export async function signalEchoWorkflow(): Promise<void> {
  const pending: string[] = [];
  setHandler(pingSignal, ({ replyTo }) => {
    pending.push(replyTo);
  });
  for (;;) {
    await condition(() => pending.length > 0);
    await getExternalWorkflowHandle(pending.shift()!).signal(pongSignal);
  }
}

export async function signalWaiterWorkflow(): Promise<void> {
  let ponged = false;
  setHandler(pongSignal, () => {
    ponged = true;
  });
  await condition(() => ponged);
}
