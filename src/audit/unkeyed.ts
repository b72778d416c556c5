// What Airlock says wherever it runs with an unkeyed audit chain (a plain SHA-256 chain, no
// checkpoints): at `airlock serve`'s start, in /healthz and in the answer of a verification. Such a
// chain shows accidents, not tampering: whoever can write to the database can rewrite an event (a
// rejection into an approval) and recompute every hash after it, and verification still passes.

export const UNKEYED_AUDIT_WARNING =
  "the audit chain is not keyed: whoever can write to the database can rewrite its events and recompute the hashes, and verification still passes; key it with AIRLOCK_AUDIT_KEY (a secret of 16 bytes or more, e.g. `openssl rand -hex 32`)";

/** How the audit chain is protected, as /healthz and verification answers report it. */
export interface AuditKeying {
  /** New events are HMACs under the audit key (`keyedFrom` in a verification says from which one). */
  keyed: boolean;
  /** Present when `keyed` is false: what that leaves open and how to close it. */
  warning?: string;
}

export function auditKeying(keyed: boolean): AuditKeying {
  return keyed ? { keyed } : { keyed, warning: UNKEYED_AUDIT_WARNING };
}
