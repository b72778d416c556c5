import type { ApprovalRequest, RequestInput } from "../core/schemas.js";
import type { Airlock } from "./engine.js";
import type { AirlockTickets } from "./tickets.js";

/** What both the in-process engine and the HTTP client (`createClient`) offer, so code written
 * against an agent's gate runs the same locally and against a server: open a gate, read it (by id or
 * by idempotency key), wait, decide, cancel, claim the approved action for execution (once), record
 * what ran without a human, and take and finish tickets (a once-only right to go on, such as one
 * resume of a parked run: tickets.ts). */
export type AirlockApi = Pick<
  Airlock,
  | "get"
  | "getByKey"
  | "list"
  | "waitFor"
  | "decide"
  | "cancel"
  | "claimExecution"
  | "renewExecution"
  | "finishExecution"
  | "record"
> &
  AirlockTickets & {
    /** Opens a gate. (The engine's `RequestOptions`, a pending quota, are the caller's in process;
     * a server applies its own limits.) */
    request(input: RequestInput): Promise<ApprovalRequest>;
  };
