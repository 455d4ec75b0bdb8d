/** The time as activities see it (tests of time windows give their own). */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
