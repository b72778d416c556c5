import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { isAirlockError } from "../../src/core/errors.js";
import type { Policy } from "../../src/core/policy.js";
import { type ParsedRequestInput, requestInputSchema } from "../../src/core/schemas.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { firstVerdict, strictestVerdict } from "../../src/policy/compose.js";
import { confidencePolicy } from "../../src/policy/confidence-policy.js";
import {
  fileWriteBytes,
  forActions,
  isSmallFileWrite,
  smallFileWrites,
  when,
} from "../../src/policy/rules.js";
import { sqliteStore } from "../../src/store/sqlite.js";

const input = (over: Record<string, unknown>): ParsedRequestInput =>
  requestInputSchema.parse({ title: "t", ...over });

const ask = (policy: Policy, over: Record<string, unknown>) => policy({ input: input(over) });

describe("smallFileWrites", () => {
  const policy = smallFileWrites({ maxBytes: 100 });

  it("auto-approves a write of exactly maxBytes, not one byte more", async () => {
    expect(
      await ask(policy, { action: "files.write", args: { content: "x".repeat(100) } }),
    ).toMatchObject({ level: "auto" });
    expect(
      await ask(policy, { action: "files.write", args: { content: "x".repeat(101) } }),
    ).toBeUndefined();
  });

  it("counts UTF-8 bytes, not characters", async () => {
    // "é" is two bytes.
    expect(
      await ask(policy, { action: "files.write", args: { content: "é".repeat(50) } }),
    ).toMatchObject({ level: "auto" });
    expect(
      await ask(policy, { action: "files.write", args: { content: "é".repeat(51) } }),
    ).toBeUndefined();
  });

  it("has no opinion on other actions or on writes of unknown size", async () => {
    expect(await ask(policy, { action: "files.delete", args: { content: "" } })).toBeUndefined();
    expect(await ask(policy, { action: "files.write", args: { path: "/a" } })).toBeUndefined();
    expect(await ask(policy, { action: "files.write", args: { bytes: -1 } })).toBeUndefined();
  });

  it("reads a declared size when there is no content", async () => {
    expect(await ask(policy, { action: "write_file", args: { size: 100 } })).toMatchObject({
      level: "auto",
    });
    expect(fileWriteBytes({ bytes: 7 })).toBe(7);
    expect(fileWriteBytes({ content: 7 })).toBeUndefined();
  });

  it("does not take a declared size beside content it cannot measure", async () => {
    const big = { type: "Buffer", data: Array.from({ length: 10_000 }, () => 120) };
    expect(fileWriteBytes({ content: big, size: 1 })).toBeUndefined();
    expect(
      await ask(policy, { action: "files.write", args: { content: ["x".repeat(5000)], bytes: 1 } }),
    ).toBeUndefined();
  });

  it("takes its own list of actions", async () => {
    const custom = isSmallFileWrite({ maxBytes: 10, actions: ["fs.put"] });
    expect(custom(input({ action: "fs.put", args: { content: "hi" } }))).toBe(true);
    expect(custom(input({ action: "files.write", args: { content: "hi" } }))).toBe(false);
  });

  it("refuses a maxBytes that is not a number from 0 up, naming it", () => {
    expect(() => smallFileWrites({ maxBytes: -1 })).toThrow(
      "Expected `maxBytes` to be a number from 0 and up, got `-1` (number)",
    );
    expect(() => smallFileWrites({ maxBytes: Number.NaN })).toThrow(/maxBytes/);
  });
});

describe("when and forActions", () => {
  it("gives the verdict only when the predicate holds", async () => {
    const p = when((i) => i.args.safe === true, { level: "quick", reason: "marked safe" });
    expect(await ask(p, { args: { safe: true } })).toEqual({
      level: "quick",
      reason: "marked safe",
    });
    expect(await ask(p, { args: { safe: false } })).toBeUndefined();
  });

  it("matches actions by name", async () => {
    const p = forActions(["deploy.prod"], "full");
    expect(await ask(p, { action: "deploy.prod" })).toMatchObject({ level: "full" });
    expect(await ask(p, { action: "deploy.staging" })).toBeUndefined();
  });
});

describe("composition", () => {
  const auto: Policy = () => ({ level: "auto", reason: "auto rule", confidence: 90 });
  const full: Policy = () => ({ level: "full", reason: "full rule", confidence: 30 });
  const quick: Policy = async () => ({ level: "quick", reason: "quick rule", confidence: 70 });
  const none: Policy = () => undefined;

  it("firstVerdict: the first policy with an opinion wins and later ones are not asked", async () => {
    let asked = false;
    const spy: Policy = () => {
      asked = true;
      return { level: "full" };
    };
    expect(await ask(firstVerdict(none, quick, spy), {})).toMatchObject({ level: "quick" });
    expect(asked).toBe(false);
    expect(await ask(firstVerdict(none, none), {})).toBeUndefined();
  });

  it("strictestVerdict: full beats quick beats auto, with the lowest confidence", async () => {
    expect(await ask(strictestVerdict(auto, full, quick), {})).toEqual({
      level: "full",
      reason: "full rule",
      confidence: 30,
    });
    expect(await ask(strictestVerdict(auto, quick, none), {})).toEqual({
      level: "quick",
      reason: "quick rule",
      confidence: 70,
    });
    expect(await ask(strictestVerdict(none), {})).toBeUndefined();
  });
});

describe("confidencePolicy", () => {
  it("scores the action and args, reading the context from metadata", async () => {
    const p = confidencePolicy();
    expect(await ask(p, { action: "update_task_status" })).toMatchObject({
      level: "auto",
      confidence: 85,
    });
    expect(await ask(p, { action: "approve_expense" })).toMatchObject({
      level: "quick",
      confidence: 60,
    });
    expect(await ask(p, { action: "approve_expense", args: { amount: 5000 } })).toMatchObject({
      level: "full",
      confidence: 45,
    });
    expect(
      await ask(p, {
        action: "approve_expense",
        metadata: { context: { userRole: "admin", workspaceVerified: true } },
      }),
    ).toMatchObject({ level: "quick", confidence: 75 });
  });

  it("reads the context hitlTool keeps in `hitl.context` (before the metadata)", async () => {
    const context = { userRole: "admin", workspaceVerified: true };
    expect(
      await ask(confidencePolicy(), {
        action: "approve_expense",
        hitl: { tool: "approve_expense", context },
        metadata: { context: {} },
      }),
    ).toMatchObject({ level: "quick", confidence: 75 });
  });

  it("takes thresholds and a scorer", async () => {
    const p = confidencePolicy({ autoThreshold: 50, quickThreshold: 10, score: () => 49 });
    expect(await ask(p, {})).toMatchObject({ level: "quick", confidence: 49 });
  });
});

describe("policies in the engine", () => {
  let engine: Airlock | undefined;
  afterEach(async () => {
    await engine?.close();
    engine = undefined;
  });

  it("small file writes are approved with method auto; others get the confidence level", async () => {
    engine = await createAirlock({
      store: sqliteStore(":memory:"),
      sweeper: false,
      policy: firstVerdict(smallFileWrites({ maxBytes: 1024 }), confidencePolicy()),
    });
    const small = await engine.request({
      title: "write a note",
      action: "files.write",
      args: { path: "notes.txt", content: "hello" },
    });
    expect(small.status).toBe("approved");
    expect(small.decision).toMatchObject({ outcome: "approved", method: "auto" });
    expect(small.level).toBe("auto");

    const big = await engine.request({
      title: "write a big file",
      action: "files.write",
      args: { path: "big.bin", content: "x".repeat(2048) },
    });
    expect(big.status).toBe("pending");
    expect(big.level).toBe("quick");
    expect(big.confidence).toBe(70);
  });

  it("requireApproval: false approves at once, recorded with method auto", async () => {
    engine = await createAirlock({ store: sqliteStore(":memory:"), sweeper: false });
    const r = await engine.request({ title: "queries", items: ["a", "b"], requireApproval: false });
    expect(r.status).toBe("approved");
    expect(r.decision).toMatchObject({ method: "auto", selected: ["item-1", "item-2"] });
    const events = await engine.audit({ requestId: r.id });
    expect(events.map((e) => e.type)).toEqual(["created", "decided"]);
  });

  it("a zod schema registered per action validates edited args", async () => {
    engine = await createAirlock({ store: sqliteStore(":memory:"), sweeper: false });
    engine.registerSchema("payments.send", z.object({ amount: z.number().max(100) }));
    const r = await engine.request({ title: "pay", action: "payments.send", args: { amount: 50 } });
    const err = await engine
      .decide(r.id, { outcome: "approved", reviewer: "ann", editedArgs: { amount: 500 } })
      .catch((e: unknown) => e);
    expect(isAirlockError(err, "invalid_input")).toBe(true);
    expect(String((err as Error).message)).toContain("editedArgs.amount");
    const ok = await engine.decide(r.id, {
      outcome: "approved",
      reviewer: "ann",
      editedArgs: { amount: 80 },
    });
    expect(ok.decision).toMatchObject({ method: "edit", editedArgs: { amount: 80 } });
  });
});
