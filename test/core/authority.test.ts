// The one authority rule on its own: which actor a door's proof stands for, and why that actor may
// not decide a request (core/authority.ts). The doors' own tests (test/doors) run the same rule
// through each door's real entry point.
import { describe, expect, it } from "vitest";
import {
  type ActorInput,
  actorOf,
  decidingIdentity,
  type RefusalReason,
  refusalOf,
} from "../../src/core/authority.js";
import type { Decision } from "../../src/core/schemas.js";
import { request } from "../audit/fixtures.js";

const NOW = 1_700_000_000_000;
const gate = request("req_a", {
  requester: "bot",
  approvers: ["ops"],
  deadline: NOW + 60_000,
});
const base = { proof: "api_token", channel: "api" } as const;

describe("actorOf", () => {
  const cases: [string, ActorInput, { agent: boolean; admin: boolean; decides: boolean }][] = [
    [
      "a reviewer token",
      { ...base, name: "alice", roles: ["reviewer"] },
      { agent: false, admin: false, decides: true },
    ],
    [
      "an admin token",
      { ...base, name: "root", roles: ["admin"] },
      { agent: false, admin: true, decides: true },
    ],
    [
      "an agent token",
      { ...base, name: "bot", roles: ["agent"] },
      { agent: true, admin: false, decides: false },
    ],
    [
      "agent + reviewer",
      { ...base, name: "dual", roles: ["agent", "reviewer"] },
      { agent: true, admin: false, decides: false },
    ],
    [
      "agent + admin",
      { ...base, name: "boss", roles: ["admin", "agent"] },
      { agent: true, admin: false, decides: false },
    ],
    [
      "an app token",
      { ...base, name: "chat", roles: ["app"] },
      { agent: false, admin: false, decides: false },
    ],
    [
      "app + reviewer",
      { ...base, name: "x", roles: ["app", "reviewer"] },
      { agent: false, admin: false, decides: true },
    ],
    [
      "a token with no role",
      { ...base, name: "x", roles: [] },
      { agent: false, admin: false, decides: false },
    ],
    [
      "a card minted by an app",
      { name: "alice", proof: "card_token", channel: "chat", mintedWithRoles: ["app"] },
      { agent: false, admin: false, decides: true },
    ],
    [
      "a card minted by an agent",
      { name: "alice", proof: "card_token", channel: "chat", mintedWithRoles: ["agent"] },
      { agent: true, admin: false, decides: false },
    ],
    [
      "a card minted by an agent + admin token",
      { name: "alice", proof: "card_token", channel: "chat", mintedWithRoles: ["agent", "admin"] },
      { agent: true, admin: false, decides: false },
    ],
    [
      "a Slack user (no token)",
      { name: "alice", proof: "slack_signature", channel: "slack" },
      { agent: false, admin: false, decides: true },
    ],
  ];
  for (const [what, input, want] of cases) {
    it(what, () => {
      expect(actorOf(input)).toMatchObject(want);
    });
  }

  it("names and groups in their normal form", () => {
    const a = actorOf({
      ...base,
      name: " ＡＬＩＣＥ ",
      groups: ["Ops", "ops"],
      roles: ["reviewer"],
    });
    expect(a.name).toBe("alice");
    expect(a.groups).toEqual(["ops"]);
  });
});

describe("refusalOf", () => {
  const reviewer = (name: string, groups: string[] = []) =>
    actorOf({ ...base, name, groups, roles: ["reviewer"] });
  const approved = (by: string): Decision => ({
    outcome: "approved",
    method: "approve_all",
    reviewer: by,
    channel: "api",
    decidedAt: NOW,
  });
  const cases: [
    string,
    ReturnType<typeof actorOf>,
    typeof gate,
    number,
    RefusalReason | undefined,
  ][] = [
    ["an approver by group", reviewer("alice", ["ops"]), gate, NOW, undefined],
    ["an approver by name", reviewer("alice"), { ...gate, approvers: ["alice"] }, NOW, undefined],
    ["open to everyone", reviewer("carol"), { ...gate, approvers: [] }, NOW, undefined],
    [
      "an admin, not listed",
      actorOf({ ...base, name: "root", roles: ["admin"] }),
      gate,
      NOW,
      undefined,
    ],
    [
      "an agent, even listed",
      actorOf({ ...base, name: "dual", groups: ["ops"], roles: ["agent", "reviewer"] }),
      gate,
      NOW,
      "agent",
    ],
    [
      "an agent on a decided request",
      actorOf({ ...base, name: "bot", roles: ["agent"] }),
      { ...gate, status: "approved" },
      NOW,
      "agent",
    ],
    [
      "an app token",
      actorOf({ ...base, name: "chat", roles: ["app"] }),
      gate,
      NOW,
      "no_deciding_role",
    ],
    [
      "a decided request",
      reviewer("alice", ["ops"]),
      { ...gate, status: "rejected" },
      NOW,
      "not_pending",
    ],
    ["past its deadline", reviewer("alice", ["ops"]), gate, NOW + 60_000, "overdue"],
    ["the requester, listed", reviewer("bot", ["ops"]), gate, NOW, "requester"],
    ["the requester, fullwidth", reviewer("ＢＯＴ", ["ops"]), gate, NOW, "requester"],
    [
      "the requester as admin",
      actorOf({ ...base, name: "bot", roles: ["admin"] }),
      gate,
      NOW,
      "requester",
    ],
    ["not an approver", reviewer("carol", ["finance"]), gate, NOW, "not_approver"],
    [
      "a second approval of one person",
      reviewer("alice", ["ops"]),
      { ...gate, quorum: 2, decisions: [approved("alice")] },
      NOW,
      "already_approved",
    ],
    [
      "another person toward the quorum",
      reviewer("olga", ["ops"]),
      { ...gate, quorum: 2, decisions: [approved("alice")] },
      NOW,
      undefined,
    ],
  ];
  for (const [what, actor, r, now, reason] of cases) {
    it(`${what} → ${reason ?? "may decide"}`, () => {
      expect(refusalOf(actor, r, now)?.reason).toBe(reason);
    });
  }

  it("names no approver or group in what it says", () => {
    const said = refusalOf(reviewer("carol", ["finance"]), {
      ...gate,
      approvers: ["ops", "secret-team"],
    });
    expect(said?.message).not.toMatch(/ops|secret-team/);
  });
});

describe("decidingIdentity", () => {
  it("refuses who may not decide with 403 and leaves the request's state to the state machine", () => {
    const agent = actorOf({ ...base, name: "bot", roles: ["agent"] });
    expect(() => decidingIdentity(agent, gate)).toThrow(
      expect.objectContaining({ code: "forbidden" }),
    );
    const carol = actorOf({ ...base, name: "carol", groups: ["finance"], roles: ["reviewer"] });
    expect(() => decidingIdentity(carol, gate)).toThrow(
      expect.objectContaining({ code: "forbidden" }),
    );
    // A decided request: the state machine answers (409 with the winner), not authority.
    const alice = actorOf({ ...base, name: "alice", groups: ["ops"], roles: ["reviewer"] });
    expect(decidingIdentity(alice, { ...gate, status: "approved" })).toEqual({
      reviewer: "alice",
      groups: ["ops"],
    });
    // An admin is credited with the request's approvers.
    const root = actorOf({ ...base, name: "root", roles: ["admin"] });
    expect(decidingIdentity(root, gate).groups).toEqual(["ops"]);
  });
});
