/**
 * The first attempt's fast path (issue 18), process-local: when the fan-out runs in a process
 * that also runs the `webhooks` worker, the delivery workflow starts eagerly on that worker,
 * and its first attempt is a local activity there, which reads what the fan-out just wrote
 * from memory instead of from the store. Nothing here is needed for correctness: a miss (the
 * workflow ran in another process, the entry expired) falls back to reading the store.
 *
 * Slow targets: a local activity holds its workflow task until it ends, and an attempt may wait
 * 10 s on its target, so a target that times out must not fill the worker's workflow task slots
 * (that is how an earlier try at local attempts lost deliveries: see decision 0110). A target
 * gets a local first attempt only while it answers fast (none of its attempts in this process
 * took `SLOW_ATTEMPT_MS` or more, or failed without an answer, in the last `SLOW_MEMORY_MS`,
 * and none of its local attempts still out has been waiting that long),
 * and only `MAX_LOCAL_PER_TARGET` of its local attempts (and `MAX_LOCAL_IN_FLIGHT` in all) may
 * be in flight at once; every other first attempt is an ordinary activity, as before.
 */

/** What the first attempt needs, as the fan-out read and wrote it. */
export interface RememberedDelivery {
  deliveryId: string;
  eventType: string;
  requestBody: string;
  url: string;
  secret: string;
  active: boolean;
}

/** An attempt that took this long (or got no answer) marks its target slow. */
export const SLOW_ATTEMPT_MS = 3_000;
/** How long a slow target stays on ordinary activities. */
export const SLOW_MEMORY_MS = 60_000;
/** Local first attempts in flight at once, per target and in all (the worker's workflow task slots are sized above the total). */
export const MAX_LOCAL_PER_TARGET = 100;
export const MAX_LOCAL_IN_FLIGHT = 200;
/** A remembered delivery (and a reservation) older than this is dropped: its workflow ran elsewhere, or late. */
const REMEMBER_MS = 10_000;

/** What the fast path needs of a webhooks worker: whether it runs (Temporal's Worker has it). */
export interface LocalAttemptHost {
  getState(): string;
}

/** The webhooks workers of this process; the fast path is on while one of them runs, and only then. */
const hosts = new Set<LocalAttemptHost>();
/** Set by tests and the reliability script: on or off whatever runs here; null follows the workers. */
let forced: boolean | null = null;
const remembered = new Map<string, { at: number; delivery: RememberedDelivery }>();
/** Reservations of local first attempts: delivery id -> target and when. */
const reservations = new Map<string, { target: string; at: number }>();
const slowUntil = new Map<string, number>();

/**
 * Called for the `webhooks` worker a process creates: while it runs, fan-outs here may start
 * deliveries eagerly on it with a local first attempt. Nothing to undo: a worker that stopped
 * no longer counts, so a process (or a test suite) that stops its worker is back on ordinary
 * first attempts without being told.
 */
export function hostLocalFirstAttempts(worker: LocalAttemptHost): void {
  hosts.add(worker);
}

/** Tests and the reliability script: the fast path on or off regardless of the workers here; null follows them again. */
export function forceLocalFirstAttempts(on: boolean | null): void {
  forced = on;
  if (on === false) forget();
}

export function localFirstAttemptsEnabled(): boolean {
  if (forced !== null) return forced;
  let running = false;
  for (const host of hosts) {
    const state = host.getState();
    if (state === 'RUNNING') running = true;
    else if (state === 'STOPPED' || state === 'FAILED') hosts.delete(host);
  }
  if (!running && hosts.size === 0) forget();
  return running;
}

function forget(): void {
  remembered.clear();
  reservations.clear();
}

/** The target a health record is kept for: its origin (scheme, host and port). */
function targetOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/**
 * Whether the delivery's first attempt may be a local activity; when it may, the attempt is
 * reserved (released by the attempt, or expired) and the delivery remembered for it.
 */
export function reserveLocalFirstAttempt(delivery: RememberedDelivery, now = Date.now()): boolean {
  if (!localFirstAttemptsEnabled()) return false;
  const target = targetOf(delivery.url);
  if ((slowUntil.get(target) ?? 0) > now) return false;
  let inFlight = 0;
  let forTarget = 0;
  let oldestForTarget = now;
  for (const [id, reservation] of reservations) {
    if (now - reservation.at > REMEMBER_MS) {
      reservations.delete(id);
      continue;
    }
    inFlight++;
    if (reservation.target === target) {
      forTarget++;
      oldestForTarget = Math.min(oldestForTarget, reservation.at);
    }
  }
  // A target whose attempt has been out for SLOW_ATTEMPT_MS without an answer is slow now, not
  // when that attempt finally times out: otherwise every delivery fanned out to it meanwhile
  // would hold a workflow task for the whole timeout.
  if (now - oldestForTarget >= SLOW_ATTEMPT_MS) {
    slowUntil.set(target, now + SLOW_MEMORY_MS);
    return false;
  }
  if (inFlight >= MAX_LOCAL_IN_FLIGHT || forTarget >= MAX_LOCAL_PER_TARGET) return false;
  reservations.set(delivery.deliveryId, { target, at: now });
  for (const [id, entry] of remembered) {
    if (now - entry.at <= REMEMBER_MS) break; // oldest first: the rest are newer
    remembered.delete(id);
  }
  remembered.set(delivery.deliveryId, { at: now, delivery });
  return true;
}

/** The delivery as the fan-out wrote it, once, if it was remembered here and is fresh. */
export function takeRemembered(deliveryId: string, now = Date.now()): RememberedDelivery | null {
  const entry = remembered.get(deliveryId);
  if (!entry) return null;
  remembered.delete(deliveryId);
  return now - entry.at <= REMEMBER_MS ? entry.delivery : null;
}

/** Every attempt made here reports how its target answered; a slow or silent one moves the target to ordinary activities for a while. */
export function recordTargetAnswer(deliveryId: string, url: string, answer: { latencyMs: number; answered: boolean }, now = Date.now()): void {
  reservations.delete(deliveryId);
  if (answer.latencyMs < SLOW_ATTEMPT_MS && answer.answered) return;
  if (slowUntil.size > 10_000) for (const [target, until] of slowUntil) if (until <= now) slowUntil.delete(target);
  slowUntil.set(targetOf(url), now + SLOW_MEMORY_MS);
}

/** Local first attempts reserved and not yet ended (tests). */
export function localAttemptsInFlight(): number {
  return reservations.size;
}
