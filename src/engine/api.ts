import type { Airlock } from "./engine.js";

/** What both the in-process engine and the HTTP client (`createClient`) offer, so code written
 * against an agent's gate runs the same locally and against a server. */
export type AirlockApi = Pick<
  Airlock,
  "request" | "get" | "list" | "waitFor" | "decide" | "cancel"
>;
