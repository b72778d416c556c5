// What every example agent talks to: the Airlock API shared by the in-process engine and the HTTP
// client, plus the engine's `record` when it is there (the client has none), for audit entries.
import { randomUUID } from "node:crypto";
import type { AirlockApi } from "../../src/engine/api.js";
import type { Airlock } from "../../src/engine/engine.js";

export type Gate = AirlockApi & {
  record?: Airlock["record"];
  /** Claims an approval for execution, once (the engine and the HTTP client both have it). */
  claimExecution?: Airlock["claimExecution"];
};

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
