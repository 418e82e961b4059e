/** The one clock. Tests pass a controllable one so nothing ever sleeps. */
export type Clock = { now(): Date };

export const systemClock: Clock = { now: () => new Date() };
