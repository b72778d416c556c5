// airlockToHitlResponse checks each approval with verifyApproval before it becomes the middleware's
// approve / edit: an expired approval, or one for other args than the interrupt's action, is a reject.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  airlockToHitlResponse,
  type HitlRequest,
  hitlToAirlock,
} from "../../../src/adapters/langgraph.js";
import { type Airlock, createAirlock, memoryStore } from "../../../src/index.js";

let airlock: Airlock;
beforeEach(async () => {
  airlock = await createAirlock({ store: memoryStore() });
});
afterEach(() => airlock.close());

const hitl: HitlRequest = {
  actionRequests: [{ name: "send_email", args: { to: "ann@example.com", body: "Hi" } }],
  reviewConfigs: [{ actionName: "send_email", allowedDecisions: ["approve", "edit", "reject"] }],
};

async function approved(threadId: string, extra: { editedArgs?: Record<string, unknown> } = {}) {
  const [r] = await hitlToAirlock(airlock, { threadId, interruptId: "i1", request: hitl });
  if (!r) throw new Error("no request");
  await airlock.decide(r.id, {
    outcome: "approved",
    reviewer: "alice",
    validForMs: 1_000,
    ...(extra.editedArgs ? { method: "edit" as const, editedArgs: extra.editedArgs } : {}),
  });
  const settled = await airlock.get(r.id);
  const until = settled.decision?.validUntil;
  if (until === undefined) throw new Error("the approval has no validUntil");
  return { settled, until };
}

describe("airlockToHitlResponse verifies each approval", () => {
  it("an approval still valid is an approve", async () => {
    const { settled, until } = await approved("e1");
    expect(airlockToHitlResponse([settled], hitl, until - 1)).toEqual({
      decisions: [{ type: "approve" }],
    });
  });

  it("an expired approval becomes a reject that says it expired", async () => {
    const { settled, until } = await approved("e2");
    const { decisions } = airlockToHitlResponse([settled], hitl, until + 1);
    expect(decisions).toHaveLength(1);
    expect(decisions[0]).toMatchObject({ type: "reject" });
    expect(decisions[0]?.type === "reject" && decisions[0].message).toContain("expired");
  });

  it("an expired edit becomes a reject, not the edited action", async () => {
    const { settled, until } = await approved("e3", {
      editedArgs: { to: "ann@example.com", body: "Hello Ann" },
    });
    expect(airlockToHitlResponse([settled], hitl, until - 1).decisions[0]).toEqual({
      type: "edit",
      editedAction: { name: "send_email", args: { to: "ann@example.com", body: "Hello Ann" } },
    });
    const late = airlockToHitlResponse([settled], hitl, until + 1).decisions[0];
    expect(late).toMatchObject({ type: "reject" });
    expect(late?.type === "reject" && late.message).toContain("expired");
  });

  it("an approval for other args than the interrupt's action becomes a reject (args_mismatch)", async () => {
    const { settled, until } = await approved("e4");
    const other: HitlRequest = {
      ...hitl,
      actionRequests: [{ name: "send_email", args: { to: "eve@example.com", body: "Hi" } }],
    };
    const d = airlockToHitlResponse([settled], other, until - 1).decisions[0];
    expect(d).toMatchObject({ type: "reject" });
    expect(d?.type === "reject" && d.message).toContain("arguments differ");
  });
});
