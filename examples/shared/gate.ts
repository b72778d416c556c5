// What every example agent talks to: the Airlock API shared by the in-process engine and the HTTP
// client (open, wait, decide, claim an approved execution once, record progress in the audit).
import { randomUUID } from "node:crypto";
import type { AirlockApi } from "../../src/engine/api.js";

export type Gate = AirlockApi;

/** One line per visible step. */
export type Log = (line: string) => void;

export const quiet: Log = () => {};

/** A short random id that keeps one run's idempotency keys apart from another run's. */
export function newRunId(): string {
  return randomUUID().slice(0, 8);
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
