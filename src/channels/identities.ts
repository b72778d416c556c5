// The people of the configuration: the Airlock name a decision is recorded under, the groups matched
// against a request's approvers, and how each channel knows them (a Slack user id, an email address).
// A click or a reply from someone not listed here decides nothing.
import { z } from "zod";
import { InvalidInputError } from "../core/errors.js";
import { normalizeIdentity } from "../core/identity.js";
import { type ApprovalRequest, refuseBadIdentity } from "../core/schemas.js";
import { mayDecide } from "../core/state.js";
import type { IdentityDirectory, Reviewer } from "./types.js";

export const identitySchema = z
  .object({
    email: z.email().optional(),
    slack: z.string().min(1).optional(),
    groups: z.array(z.string().min(1).superRefine(refuseBadIdentity)).default([]),
  })
  .strict();
export type IdentityConfig = z.output<typeof identitySchema>;

type Person = Reviewer & { email?: string; slack?: string };

/** Two people sharing a name (after normalising), a Slack user id or an email address (in any case):
 * one of them would decide as the other. One message per clash, naming both. */
export function identityClashes(
  people: Record<string, Pick<IdentityConfig, "email" | "slack">>,
): { person: string; message: string }[] {
  const seen = new Map<string, string>();
  const out: { person: string; message: string }[] = [];
  for (const [name, p] of Object.entries(people)) {
    const keys: [string, string][] = [[`name ${normalizeIdentity(name)}`, "the name"]];
    if (p.slack) keys.push([`slack ${p.slack}`, `the Slack user \`${p.slack}\``]);
    if (p.email) keys.push([`email ${p.email.toLowerCase()}`, `the email address ${p.email}`]);
    for (const [key, what] of keys) {
      const other = seen.get(key);
      if (other === undefined) seen.set(key, name);
      else out.push({ person: name, message: `\`${name}\` has ${what} of \`${other}\`` });
    }
  }
  return out;
}

export function createIdentityDirectory(people: Record<string, IdentityConfig>): IdentityDirectory {
  const clash = identityClashes(people)[0];
  if (clash) throw new InvalidInputError(`identities: ${clash.message}`);
  const all: Person[] = Object.entries(people).map(([name, p]) => ({
    name: normalizeIdentity(name),
    groups: p.groups.map(normalizeIdentity),
    ...(p.email ? { email: p.email.toLowerCase() } : {}),
    ...(p.slack ? { slack: p.slack } : {}),
  }));
  const bySlack = new Map(all.filter((p) => p.slack).map((p) => [p.slack as string, p]));
  const byEmail = new Map(all.filter((p) => p.email).map((p) => [p.email as string, p]));
  const reviewer = (p: Person | undefined): Reviewer | undefined =>
    p && { name: p.name, groups: [...p.groups] };
  return {
    bySlackUser: (id) => reviewer(bySlack.get(id)),
    byEmail: (address) => reviewer(byEmail.get(address.trim().toLowerCase())),
    reviewersFor: (request: ApprovalRequest) =>
      all
        .filter((p) => p.name !== normalizeIdentity(request.requester))
        .filter((p) => mayDecide(request, p.name, p.groups))
        .map((p) => ({ ...p, groups: [...p.groups] })),
  };
}
