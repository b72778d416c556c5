// hitlTool with `respond` (issue 33): a reviewer may answer the call instead of approving it ("the
// person acts as the tool"). The wrapped function then never runs; the call returns a HitlResponse
// carrying the answer, typed so the caller must handle it.
import { afterEach, describe, expect, expectTypeOf, it } from "vitest";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { hitlTool } from "../../src/tools/hitl-tool.js";
import {
  type HitlPending,
  type HitlRejection,
  type HitlResponse,
  isHitlPending,
  isHitlRejection,
  isHitlResponse,
} from "../../src/tools/results.js";
import { eventually } from "../helpers.js";

let engine: Airlock | undefined;
afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

async function newEngine(): Promise<Airlock> {
  engine = await createAirlock({ store: sqliteStore(":memory:") });
  return engine;
}

const low = () => 10; // always a full review

describe("hitlTool with respond", () => {
  it("returns the reviewer's answer as the result and never runs the function (blocking)", async () => {
    const e = await newEngine();
    let ran = 0;
    const lookUp = hitlTool(
      async (args: { customer: string }) => {
        ran++;
        return { plan: `gold for ${args.customer}` };
      },
      {
        name: "lookup_plan",
        airlock: e,
        blocking: true,
        confidence: low,
        respond: {
          schema: {
            type: "object",
            properties: { plan: { type: "string" } },
            required: ["plan"],
          },
        },
      },
    );
    const pending = lookUp({ customer: "ACME" });
    const request = await eventually(
      async () => (await e.list({ status: "pending" })).items[0] ?? false,
      { timeoutMs: 5_000, intervalMs: 5, what: "the pending call" },
    );
    expect(request.allowed).toContain("respond");
    expect(request.responseSchema).toMatchObject({ required: ["plan"] });
    await expect(
      e.decide(request.id, { outcome: "responded", reviewer: "alice", response: { plan: 3 } }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "response.plan" });
    await e.decide(request.id, {
      outcome: "responded",
      reviewer: "alice",
      response: { plan: "silver, until the contract is renewed" },
      comment: "looked it up in the CRM",
    });
    const result = await pending;
    // The type makes the caller handle the answer: it is part of the union.
    expectTypeOf(result).toEqualTypeOf<{ plan: string } | HitlRejection | HitlResponse>();
    expect(ran).toBe(0);
    expect(isHitlResponse(result)).toBe(true);
    expect(isHitlRejection(result)).toBe(false);
    expect(result).toEqual({
      responded: true,
      response: { plan: "silver, until the contract is renewed" },
      toolName: "lookup_plan",
      approvalId: request.id,
      reviewer: "alice",
      comment: "looked it up in the CRM",
    });
    // Nothing was claimed: the answer is not an approval.
    expect((await e.get(request.id)).execution).toBeUndefined();
  });

  it("resumes a pending call to the answer, and a second resume gives the same answer, still not running", async () => {
    const e = await newEngine();
    let ran = 0;
    const ask = hitlTool(
      (_args: { question: string }) => {
        ran++;
        return "ran";
      },
      { name: "ask_person", airlock: e, confidence: low, respond: true },
    );
    const marker = await ask({ question: "Which region?" });
    expect(isHitlPending(marker)).toBe(true);
    // A front end reading the marker knows the reviewer may answer.
    expect((marker as HitlPending).hitl_result.config.respond).toBe(true);
    const id = (marker as HitlPending).hitl_result.approvalId as string;
    expect((await e.get(id)).responseSchema).toBeUndefined();
    await e.decide(id, { outcome: "responded", reviewer: "bob", response: "eu-west" });
    const first = await ask.resume(id);
    const second = await ask.resume(id);
    expect(first).toMatchObject({ responded: true, response: "eu-west", reviewer: "bob" });
    expect(second).toEqual(first);
    expect(ran).toBe(0);
    // An approval of the same kind of call still runs it.
    const again = (await ask({ question: "Go?" })) as HitlPending;
    const againId = again.hitl_result.approvalId as string;
    await e.decide(againId, { outcome: "approved", reviewer: "bob" });
    expect(await ask.resume(againId)).toBe("ran");
    expect(ran).toBe(1);
  });

  it("does not offer respond unless configured, and refuses a malformed respond option", async () => {
    const e = await newEngine();
    const plain = hitlTool((_a: { x: number }) => "ok", {
      name: "plain",
      airlock: e,
      confidence: low,
    });
    const marker = (await plain({ x: 1 })) as HitlPending;
    expect(marker.hitl_result.config).not.toHaveProperty("respond");
    const id = marker.hitl_result.approvalId as string;
    expect((await e.get(id)).allowed).not.toContain("respond");
    await expect(
      e.decide(id, { outcome: "responded", reviewer: "alice", response: "x" }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "outcome" });
    // Without respond, the result type has no HitlResponse.
    expectTypeOf(await plain({ x: 2 })).toEqualTypeOf<string | HitlPending | HitlRejection>();
    expect(() =>
      hitlTool(() => 1, { name: "bad", respond: { schema: "nope" } as unknown as true }),
    ).toThrow(/Expected `respond` to be true, false or \{ schema/);
  });
});
