// The door contract: one table of cases run against every door through that door's real entry point,
// the way every store passes the store contract. A door is any way to act on a request (the HTTP API,
// its bulk route, the inbox, the embeddable card, Slack, a mail link, ...). Whatever a door answers,
// the contract judges by what the engine recorded: a refused attempt leaves no approval behind.
//
// A door says how it would speak as each kind of caller; where a kind has no meaning for a door (a
// Slack user is a person mapped by an admin, never an agent's credential), the door says why, and
// that reason is part of the test's output.
import { expect, it } from "vitest";
import { viewDigestOf } from "../../src/core/review-view.js";
import type { ApprovalRequest, RequestInput } from "../../src/core/schemas.js";
import type { World } from "./world.js";

/** Who a door is asked to act as. */
export type Who =
  /** A listed approver (alice or olga, both in ops). */
  | { kind: "reviewer"; name: "alice" | "olga" }
  /** The agent's own credential (agent `bot`, the requester of the contract's requests). */
  | { kind: "agent" }
  /** A credential an agent holds that also carries a deciding role (a token stored before such
   * tokens were refused): agent + reviewer. */
  | { kind: "dual" }
  /** The same, agent + admin. */
  | { kind: "dual_admin" }
  /** Anything minted with an agent's credential (a card token, an inbox session). */
  | { kind: "minted_by_agent" }
  /** A reviewer who is the request's own requester (`alice` requests, `alice` decides). */
  | { kind: "requester" }
  /** A reviewer who is not among the approvers (carol, finance). */
  | { kind: "non_approver" }
  /** A reviewer whose token was revoked before acting. */
  | { kind: "revoked" }
  /** A credential derived from a reviewer's token (session, card) after that token was revoked. */
  | { kind: "derived_from_revoked" };

/** A door's own answer to one attempt: whether it said no (the contract checks the record too). */
export interface Attempt {
  refused: boolean;
  /** What the door answered, for the failure message. */
  said: string;
}

/** This door cannot act as that kind of caller, and why. */
export interface NotApplicable {
  notApplicable: string;
}

export interface Door {
  name: string;
  /** False for a door that offers no way to decide at all (the MCP server is the agent's door):
   * the contract then checks that nothing it offers decides, as any caller. */
  decides?: false;
  /** Approves `request` as `who`, through the door's real entry point. */
  approve(world: World, who: Who, request: ApprovalRequest): Promise<Attempt | NotApplicable>;
  /** The labels the door shows on its approve and reject controls for `request`, when it draws any. */
  labels?(world: World, request: ApprovalRequest): Promise<{ approve: string; reject: string }>;
  /** The door's decisions carry the digest of the review view it showed (core/review-view.ts): the
   * contract checks the approval records `decision.viewDigest`. */
  bindsView?: true;
  /** Approves `request` as a listed approver (alice) through the door's real entry point, carrying
   * `staleDigest(request)` where the door carries the digest of the view it showed: as if the
   * request had changed between showing and deciding. */
  approveStale?(world: World, request: ApprovalRequest): Promise<Attempt>;
  /** Answers `request` (one that allows respond) as `who` with `response`, through the door's real
   * entry point, for a door that offers the reviewer's answer (`{"outcome": "responded"}`). */
  /** Approves `request` as `who` with its args edited to `editedArgs`, through the door's real
   * entry point, for a door that offers editing. */
  edit?(
    world: World,
    who: Who,
    request: ApprovalRequest,
    editedArgs: Record<string, unknown>,
  ): Promise<Attempt | NotApplicable>;
  respond?(
    world: World,
    who: Who,
    request: ApprovalRequest,
    response: string,
  ): Promise<Attempt | NotApplicable>;
}

/** The digest of a view the request does not have: the same request with other args, as a reviewer
 * would have been shown before an (imagined) change. */
export function staleDigest(request: ApprovalRequest): string {
  return viewDigestOf({ ...request, args: { ...request.args, changed: "since it was shown" } });
}

const isNa = (a: Attempt | NotApplicable): a is NotApplicable => "notApplicable" in a;

/** A pending request of agent `bot` for ops, as the contract's cases need it. */
export async function openRequest(
  world: World,
  extra: Partial<RequestInput> = {},
): Promise<ApprovalRequest> {
  return world.airlock.request({
    title: "Rotate the production database password",
    action: "db.rotate",
    args: { database: "prod" },
    requester: "bot",
    approvers: ["ops"],
    timeoutMs: 3_600_000,
    ...extra,
  });
}

const approvals = (r: ApprovalRequest) => r.decisions.filter((d) => d.outcome === "approved");

/** A pending request of agent `bot` that a reviewer may answer instead of approving. */
function openQuestion(world: World, extra: Partial<RequestInput> = {}): Promise<ApprovalRequest> {
  return openRequest(world, {
    title: "Which region should the replica go to?",
    allowed: ["approve", "reject", "respond"],
    responseSchema: { type: "string", minLength: 1 },
    ...extra,
  });
}

/** Runs `attempt` and expects it refused by the door and, above all, nothing approved. */
async function expectRefused(
  world: World,
  door: Door,
  who: Who,
  request: ApprovalRequest,
): Promise<void> {
  const attempt = await door.approve(world, who, request);
  if (isNa(attempt)) {
    // Not applicable to this door: said in the output, and still nothing may have changed.
    console.info(
      `door contract: ${door.name} / ${who.kind}: not applicable: ${attempt.notApplicable}`,
    );
  } else {
    expect(attempt.refused, `${door.name} answered: ${attempt.said}`).toBe(true);
  }
  const after = await world.airlock.get(request.id);
  expect(approvals(after), `${door.name} / ${who.kind} recorded an approval`).toEqual([]);
  expect(after.status).not.toBe("approved");
}

/** Registers the contract's cases (vitest `it`s) for one door; call inside a `describe`. */
export function doorContract(world: () => World, door: Door): void {
  if (door.decides === false) {
    it(`${door.name}: offers nothing that decides, whoever calls it`, async () => {
      for (const who of [{ kind: "agent" }, { kind: "reviewer", name: "alice" }] as Who[]) {
        await expectRefused(world(), door, who, await openRequest(world()));
      }
    });
    return;
  }
  it(`${door.name}: a listed approver decides (the door works)`, async () => {
    const request = await openRequest(world());
    const attempt = await door.approve(world(), { kind: "reviewer", name: "alice" }, request);
    if (isNa(attempt)) throw new Error(`${door.name} cannot act as a reviewer`);
    expect(attempt.refused, attempt.said).toBe(false);
    const after = await world().airlock.get(request.id);
    expect(after.status).toBe("approved");
    expect(after.decision?.reviewer).toBe("alice");
    // Bound to the view the door showed, and the audit keeps it.
    if (door.bindsView) {
      expect(after.decision?.viewDigest, `${door.name} sent no view digest`).toBe(
        viewDigestOf(request),
      );
      const decided = (await world().airlock.audit({ requestId: request.id })).find(
        (e) => e.type === "decided",
      );
      expect(decided?.data.viewDigest).toBe(viewDigestOf(request));
    }
  });

  if (door.approveStale) {
    const stale = door.approveStale.bind(door);
    it(`${door.name}: a view that changed since it was shown → refused`, async () => {
      const request = await openRequest(world());
      const attempt = await stale(world(), request);
      expect(attempt.refused, `${door.name} answered: ${attempt.said}`).toBe(true);
      const after = await world().airlock.get(request.id);
      expect(approvals(after), `${door.name} recorded an approval on a stale view`).toEqual([]);
      expect(after.status).toBe("pending");
    });
  }

  const refusedKinds: Who[] = [
    { kind: "agent" },
    { kind: "dual" },
    { kind: "dual_admin" },
    { kind: "minted_by_agent" },
    { kind: "non_approver" },
    { kind: "revoked" },
    { kind: "derived_from_revoked" },
  ];
  for (const who of refusedKinds) {
    it(`${door.name}: ${who.kind.replaceAll("_", " ")} → refused`, async () => {
      // Open to every reviewer of ops, and to dual (an agent's token in ops).
      const request = await openRequest(world());
      await expectRefused(world(), door, who, request);
    });
  }

  it(`${door.name}: the requester → refused`, async () => {
    // alice may decide ops's requests, but not one she requested herself.
    const request = await openRequest(world(), { requester: "alice" });
    await expectRefused(world(), door, { kind: "requester" }, request);
  });

  it(`${door.name}: the same person twice in a quorum counts once`, async () => {
    const request = await openRequest(world(), { quorum: 2 });
    const alice = { kind: "reviewer", name: "alice" } as const;
    const first = await door.approve(world(), alice, request);
    if (isNa(first)) throw new Error(`${door.name} cannot act as a reviewer`);
    expect(first.refused, first.said).toBe(false);
    const again = await door.approve(world(), alice, await world().airlock.get(request.id));
    if (!isNa(again)) expect(again.refused, again.said).toBe(true);
    const after = await world().airlock.get(request.id);
    expect(after.status).toBe("pending");
    expect(approvals(after).map((d) => d.reviewer)).toEqual(["alice"]);
    // A second person completes it.
    const olga = await door.approve(world(), { kind: "reviewer", name: "olga" }, after);
    if (isNa(olga)) throw new Error(`${door.name} cannot act as a second reviewer`);
    expect(olga.refused, olga.said).toBe(false);
    expect((await world().airlock.get(request.id)).status).toBe("approved");
  });

  it(`${door.name}: after the deadline → refused`, async () => {
    const request = await openRequest(world(), { timeoutMs: 200 });
    // Past the deadline, whether or not the sweeper has fired yet.
    await new Promise((r) => setTimeout(r, 300));
    await expectRefused(world(), door, { kind: "reviewer", name: "alice" }, request);
  });

  if (door.edit) {
    const edit = door.edit.bind(door);
    // The request carries its args' schema; the server was given none of its own.
    const payment = () =>
      openRequest(world(), {
        title: "Pay invoice 7",
        action: "payment.send",
        args: { amountCents: 4800, to: "ACME" },
        allowed: ["approve", "reject", "edit"],
        argsSchema: {
          type: "object",
          properties: { amountCents: { type: "integer", minimum: 1 }, to: { type: "string" } },
          required: ["amountCents", "to"],
          additionalProperties: false,
        },
      });
    const alice = { kind: "reviewer", name: "alice" } as const;
    it(`${door.name}: an edit that fits the request's argsSchema is approved as edited`, async () => {
      const request = await payment();
      const attempt = await edit(world(), alice, request, { amountCents: 4000, to: "ACME" });
      if (isNa(attempt)) throw new Error(`${door.name} cannot edit as a reviewer`);
      expect(attempt.refused, attempt.said).toBe(false);
      const after = await world().airlock.get(request.id);
      expect(after.status).toBe("approved");
      expect(after.decision?.editedArgs).toEqual({ amountCents: 4000, to: "ACME" });
    });
    it(`${door.name}: an edit of the wrong type → refused (422), nothing decided`, async () => {
      const request = await payment();
      const attempt = await edit(world(), alice, request, { amountCents: "lots", to: "ACME" });
      if (isNa(attempt)) throw new Error(`${door.name} cannot edit as a reviewer`);
      expect(attempt.refused, `${door.name} answered: ${attempt.said}`).toBe(true);
      // In words a person reads, naming the field.
      expect(attempt.said).toMatch(/amountCents/);
      const after = await world().airlock.get(request.id);
      expect(after.status).toBe("pending");
      expect(after.decisions).toEqual([]);
    });
  }

  if (door.respond) {
    const respond = door.respond.bind(door);
    it(`${door.name}: a listed approver answers, and the answer is what was sent`, async () => {
      const request = await openQuestion(world());
      const attempt = await respond(world(), { kind: "reviewer", name: "alice" }, request, "eu");
      if (isNa(attempt)) throw new Error(`${door.name} cannot answer as a reviewer`);
      expect(attempt.refused, attempt.said).toBe(false);
      const after = await world().airlock.get(request.id);
      expect(after.status).toBe("responded");
      expect(after.decision).toMatchObject({ reviewer: "alice", response: "eu" });
    });
    const mayNotAnswer: Who[] = [
      { kind: "agent" },
      { kind: "minted_by_agent" },
      { kind: "non_approver" },
      { kind: "requester" },
    ];
    for (const who of mayNotAnswer) {
      it(`${door.name}: ${who.kind.replaceAll("_", " ")} answering → refused`, async () => {
        const request = await openQuestion(
          world(),
          who.kind === "requester" ? { requester: "alice" } : {},
        );
        const attempt = await respond(world(), who, request, "us");
        if (isNa(attempt)) {
          console.info(
            `door contract: ${door.name} / ${who.kind} answering: not applicable: ${attempt.notApplicable}`,
          );
        } else {
          expect(attempt.refused, `${door.name} answered: ${attempt.said}`).toBe(true);
        }
        const after = await world().airlock.get(request.id);
        expect(after.status, `${door.name} / ${who.kind} recorded an answer`).toBe("pending");
        expect(after.decisions).toEqual([]);
      });
    }
  }

  if (door.labels) {
    const labels = door.labels.bind(door);
    it(`${door.name}: an inverting label is not shown`, async () => {
      const request = await openRequest(world(), {
        labels: { approve: "No, stop", reject: "Yes, proceed" },
      });
      const shown = await labels(world(), request);
      expect(shown.approve).toMatch(/^Approve/);
      expect(shown.reject).toMatch(/^Reject/);
      expect(shown.approve).not.toMatch(/no, stop/i);
      expect(shown.reject).not.toMatch(/yes, proceed/i);
    });
  }
}
