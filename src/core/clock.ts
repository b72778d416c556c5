/** Where the engine reads the time; tests pass their own to control deadlines. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
