// Text every store can keep and JSON no code can overflow on: refused once, in the core schemas, with
// an error naming the field (issue 10 item 6, issue 11 item 9).
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_ESCALATION_DEPTH, MAX_JSON_DEPTH } from "../../src/core/limits.js";
import type { OnTimeout } from "../../src/core/schemas.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { memoryStore } from "../../src/store/memory.js";

let engine: Airlock;
beforeEach(async () => {
  engine = await createAirlock({ store: memoryStore() });
});
afterEach(async () => {
  await engine.close();
});

const base = { title: "Deploy v2", requester: "agent" } as const;
const NUL = "a\u0000b";
const LONE = "x\uD800y";

function nested(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = { leaf: 1 };
  for (let i = 1; i < depth; i++) v = { a: v };
  return v;
}

function chain(steps: number): OnTimeout {
  let rule: OnTimeout = "reject";
  for (let i = 0; i < steps; i++) {
    rule = { escalate: { approvers: [`level-${i}`], timeoutMs: 1000, onTimeout: rule } };
  }
  return rule;
}

describe("text no store can keep", () => {
  it.each([
    ["title", { title: `Deploy ${NUL}` }, "title", /NUL/],
    ["requester", { requester: LONE }, "requester", /lone surrogate/],
    ["approvers", { approvers: ["ops", NUL] }, "approvers.1", /NUL/],
    ["summary", { summary: LONE }, "summary", /lone surrogate/],
    ["a string inside args", { args: { db: { host: NUL } } }, "args.db.host", /NUL/],
    ["a key inside metadata", { metadata: { [LONE]: 1 } }, `metadata.${LONE}`, /lone surrogate/],
    ["a string in an args array", { args: { list: ["ok", LONE] } }, "args.list.1", /surrogate/],
    ["an item label", { items: [{ label: NUL }] }, "items.0", /NUL|Invalid/],
  ])("refuses a NUL or lone surrogate in %s", async (_what, input, field, message) => {
    const err = await engine.request({ ...base, ...input }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "invalid_input" });
    expect((err as { field?: string }).field?.startsWith(field)).toBe(true);
    expect((err as Error).message).toMatch(message);
    expect((await engine.list()).items).toHaveLength(0);
  });

  it("accepts well-formed text, emoji (surrogate pairs) included", async () => {
    const r = await engine.request({ ...base, title: "Ship 🚀", args: { note: "naïve 𝄞" } });
    expect(r.title).toBe("Ship 🚀");
  });

  it("refuses them in a decision: comment, reviewer, edited args", async () => {
    const r = await engine.request({ ...base });
    await expect(
      engine.decide(r.id, { outcome: "rejected", reviewer: "alice", comment: NUL }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "comment" });
    await expect(
      engine.decide(r.id, { outcome: "rejected", reviewer: `ali${LONE}` }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "reviewer" });
    await expect(
      engine.decide(r.id, { outcome: "approved", reviewer: "alice", editedArgs: { x: [NUL] } }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "editedArgs.x.0" });
    expect((await engine.get(r.id)).status).toBe("pending");
  });
});

describe("nesting limits", () => {
  it(`accepts args ${MAX_JSON_DEPTH} levels deep and refuses one more, naming the field`, async () => {
    await engine.request({ ...base, args: nested(MAX_JSON_DEPTH) });
    const err = await engine
      .request({ ...base, args: nested(MAX_JSON_DEPTH + 1) })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "invalid_input", field: "args" });
    expect((err as Error).message).toMatch(`deeper than ${MAX_JSON_DEPTH} levels`);
  });

  it("refuses 100,000 levels in args, metadata, edited args and recorded data without overflowing", async () => {
    const deep = nested(100_000);
    await expect(engine.request({ ...base, args: deep })).rejects.toMatchObject({
      code: "invalid_input",
      field: "args",
    });
    await expect(engine.request({ ...base, metadata: deep })).rejects.toMatchObject({
      field: "metadata",
    });
    const r = await engine.request({ ...base });
    await expect(
      engine.decide(r.id, { outcome: "approved", reviewer: "alice", editedArgs: deep }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "editedArgs" });
    await expect(
      engine.record({ type: "notified", actor: "agent", data: deep }),
    ).rejects.toMatchObject({ code: "invalid_input", field: "data" });
  });

  it(`accepts an escalation chain of ${MAX_ESCALATION_DEPTH} steps and refuses longer ones`, async () => {
    const ok = await engine.request({
      ...base,
      timeoutMs: 60_000,
      onTimeout: chain(MAX_ESCALATION_DEPTH),
    });
    expect(ok.status).toBe("pending");
    for (const steps of [MAX_ESCALATION_DEPTH + 1, 1000, 50_000]) {
      const err = await engine
        .request({ ...base, timeoutMs: 60_000, onTimeout: chain(steps) })
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ code: "invalid_input", field: "onTimeout" });
      expect((err as Error).message).toMatch(`at most ${MAX_ESCALATION_DEPTH} steps`);
    }
  });
});
