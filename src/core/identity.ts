// Names of people, agents and groups are compared in one normal form, so `Alice`, `alice` and
// ` alice ` are one identity: one vote toward a quorum, and never an approver of their own request.

/** The normal form of an identity: Unicode NFC, surrounding spaces trimmed, inner runs of white space
 * folded to one space, lower case. */
export function normalizeIdentity(name: string): string {
  return name.normalize("NFC").trim().replace(/\s+/g, " ").toLowerCase();
}

/** True when two names are the same identity. */
export function sameIdentity(a: string, b: string): boolean {
  return normalizeIdentity(a) === normalizeIdentity(b);
}
