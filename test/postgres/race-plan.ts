// The shared plan of the multi-process race (race.int.test.ts and race-child.ts): which requests
// exist, which escalate, who decides each one and when relative to its deadline. Deterministic, so
// the parent knows what every child was told to do.
import type { RequestInput } from "../../src/core/schemas.js";

export const TOTAL = 2000;
export const WORKERS = 3;

/** One request in ten escalates to `oncall` on its first deadline, then times out 400 ms later. */
export const escalates = (k: number): boolean => k % 10 === 3;
/** One request in five has no decider at all: only a timeout can end it. */
export const undecided = (k: number): boolean => k % 5 === 0;

/** Every child sends the same input for key k (a replay is then recognised, not a conflict). */
export function inputFor(k: number): RequestInput {
  return {
    key: `race-${k}`,
    title: `race ${k}`,
    requester: "agent",
    // Deadlines spread 1.5 s to 4 s after creation, itself spread over the creation phase.
    timeoutMs: 1500 + ((k * 7919) % 2500),
    onTimeout: escalates(k) ? { escalate: { approvers: ["oncall"], timeoutMs: 400 } } : "reject",
    metadata: { k },
  };
}

/** Exactly two of the three workers decide each decided request: (k + i) % 3 picks the one out. */
export function deciders(k: number): number[] {
  if (undecided(k)) return [];
  return Array.from({ length: WORKERS }, (_, i) => i).filter((i) => (k + i) % 3 !== 0);
}

/** When worker i decides request k: 350 ms before to 100 ms after its deadline, so deciders race
 * each other and the sweepers of all three processes. */
export function offsetMs(k: number, i: number): number {
  return -350 + ((k * 37 + i * 101) % 450);
}
