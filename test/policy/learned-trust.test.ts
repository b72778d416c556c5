import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RequestInput, requestInputSchema } from "../../src/core/schemas.js";
import type { Store } from "../../src/core/store.js";
import { TRUST_RULE_ACCEPTED, TRUST_RULE_REVOKED } from "../../src/core/trust-rule.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { argsShapeHash } from "../../src/policy/args-shape.js";
import {
  createLearnedTrust,
  type LearnedTrust,
  learnedTrustPolicy,
  suggestTrustRules,
} from "../../src/policy/learned-trust.js";
import { sqliteStore } from "../../src/store/sqlite.js";

const write = (path: string, over: Partial<RequestInput> = {}): RequestInput => ({
  title: `write ${path}`,
  action: "files.write",
  args: { path, content: "hello" },
  requester: "agent",
  ...over,
});

let store: Store;
let trust: LearnedTrust;
let airlock: Airlock;

beforeEach(async () => {
  store = sqliteStore(":memory:");
  trust = createLearnedTrust({ store, threshold: 3 });
  airlock = await createAirlock({ store, policy: trust.policy, sweeper: false });
});
afterEach(async () => {
  await airlock.close();
});

/** A request decided by a person (`outcome` approve/reject/revise), or left as the policy set it. */
async function decided(
  kind: "approve" | "reject" | "revise" | "edit" | "none",
  input = write("/tmp/f"),
) {
  const r = await airlock.request(input);
  if (kind === "approve") await airlock.decide(r.id, { outcome: "approved", reviewer: "ann" });
  if (kind === "reject") await airlock.decide(r.id, { outcome: "rejected", reviewer: "bob" });
  if (kind === "revise") {
    await airlock.decide(r.id, { outcome: "revise", reviewer: "bob", comment: "smaller" });
  }
  if (kind === "edit") {
    await airlock.decide(r.id, {
      outcome: "approved",
      reviewer: "ann",
      editedArgs: { path: "/tmp/other", content: "bye" },
    });
  }
  return airlock.get(r.id);
}

describe("suggestTrustRules", () => {
  it("suggests a call once people approved it `threshold` times in a row, with what it covered", async () => {
    await decided("approve");
    await decided("approve");
    expect(await trust.suggestions()).toEqual([]);
    const third = await decided("approve");
    const [s, ...rest] = await trust.suggestions();
    expect(rest).toEqual([]);
    expect(s).toMatchObject({
      action: "files.write",
      shape: '{"content":string,"path":string}',
      shapeHash: argsShapeHash({ path: "x", content: "y" }),
      streak: 3,
    });
    expect(s?.examples).toHaveLength(3);
    expect(s?.examples[0]).toMatchObject({ id: third.id, title: third.title, reviewer: "ann" });
  });

  it("a rejection or a revise by a person breaks the run; only approvals after it count", async () => {
    for (let i = 0; i < 3; i++) await decided("approve");
    await decided("reject");
    expect(await trust.suggestions()).toEqual([]);
    await decided("approve");
    await decided("approve");
    await decided("revise");
    await decided("approve");
    await decided("approve");
    expect(await trust.suggestions()).toEqual([]);
    await decided("approve");
    expect((await trust.suggestions()).map((s) => s.streak)).toEqual([3]);
  });

  it("an approval that edited the args breaks the run: the rule would approve the unedited call", async () => {
    await decided("approve");
    await decided("approve");
    await decided("edit");
    await decided("approve");
    expect(await trust.suggestions()).toEqual([]);
  });

  it("auto-approvals neither count nor break a run", async () => {
    await decided("approve");
    await decided("none", write("/tmp/auto1", { requireApproval: false }));
    await decided("approve");
    await decided("none", write("/tmp/auto2", { requireApproval: false }));
    await decided("none", write("/tmp/auto3", { requireApproval: false }));
    expect(await trust.suggestions()).toEqual([]);
    await decided("approve");
    expect((await trust.suggestions()).map((s) => s.streak)).toEqual([3]);
  });

  it("counts each action and args shape apart", async () => {
    const other = (i: number) =>
      write(`/tmp/o${i}`, { args: { path: `/tmp/o${i}`, content: "x", mode: 420 } });
    await decided("approve");
    await decided("approve", other(1));
    await decided("reject", write("/tmp/d", { action: "files.delete" }));
    await decided("approve");
    await decided("approve", other(2));
    await decided("approve");
    expect((await trust.suggestions()).map((s) => [s.action, s.streak])).toEqual([
      ["files.write", 3],
    ]);
    await decided("reject", other(3));
    expect(await trust.suggestions()).toHaveLength(1);
  });

  it("reads at most `scanLimit` decided requests, newest first; threshold 0 turns it off", async () => {
    for (let i = 0; i < 3; i++) await decided("approve");
    const bounded = { threshold: 3, scanLimit: 2, actionScanLimit: 2 };
    expect(await suggestTrustRules(airlock, bounded)).toEqual([]);
    expect(await suggestTrustRules(airlock, { ...bounded, scanLimit: 3 })).toHaveLength(1);
    expect(await suggestTrustRules(airlock, { ...bounded, actionScanLimit: 3 })).toHaveLength(1);
    expect(await suggestTrustRules(airlock, { threshold: 0 })).toEqual([]);
    await expect(suggestTrustRules(airlock, { threshold: -1 })).rejects.toThrow(/threshold/);
  });
  it("reuses a recent scan only when asked to (maxAgeMs), and not after an accept", async () => {
    let clock = 5_000;
    const timed = createLearnedTrust({ store, threshold: 2, now: () => clock });
    await decided("approve");
    await decided("approve");
    expect(await timed.suggestions({ maxAgeMs: 1000 })).toHaveLength(1);
    await decided("reject");
    expect(await timed.suggestions({ maxAgeMs: 1000 })).toHaveLength(1); // reused
    expect(await timed.suggestions()).toEqual([]); // fresh
    await decided("approve");
    await decided("approve");
    clock += 2000;
    const [s] = await timed.suggestions({ maxAgeMs: 1000 });
    expect(s?.streak).toBe(2);
    await timed.accept({ action: "files.write", shapeHash: s?.shapeHash ?? "" }, "root");
    expect(await timed.suggestions({ maxAgeMs: 1000 })).toEqual([]);
  });

  it("reads a quieter action again on its own when the newest requests end inside its run", async () => {
    const noisy = (i: number) => write(`/n${i}`, { action: "chat.post", args: { text: "hi" } });
    await decided("approve");
    await decided("approve");
    for (let i = 0; i < 4; i++) await decided("reject", noisy(i));
    await decided("approve");
    for (let i = 4; i < 6; i++) await decided("reject", noisy(i));
    // The newest 3 hold one approval of files.write: read again alone, its run is 3 long.
    const found = await suggestTrustRules(airlock, { threshold: 3, scanLimit: 3 });
    expect(found.map((s) => [s.action, s.streak, s.examples.length])).toEqual([
      ["files.write", 3, 3],
    ]);
    expect(
      await suggestTrustRules(airlock, { threshold: 3, scanLimit: 3, rescanActions: 0 }),
    ).toEqual([]);
  });
});

describe("accepting, applying and revoking a rule", () => {
  it("refuses a call that is not suggested; an accepted rule approves the next identical call, naming itself", async () => {
    await decided("approve");
    await decided("approve");
    const hash = argsShapeHash({ path: "", content: "" });
    await expect(
      trust.accept({ action: "files.write", shapeHash: hash }, "root"),
    ).rejects.toMatchObject({ code: "conflict", message: /not a current suggestion/ });
    // Not suggested yet, so not approved either.
    expect((await decided("none")).status).toBe("pending");
    await decided("approve");
    await decided("approve");

    const rule = await trust.accept({ action: "files.write", shapeHash: hash }, "Root");
    expect(rule).toMatchObject({ action: "files.write", approvals: 4, createdBy: "root" });
    expect(await trust.rules()).toEqual([rule]);
    expect(await trust.suggestions()).toEqual([]);

    const next = await decided("none");
    expect(next.status).toBe("approved");
    expect(next.decision).toMatchObject({ method: "auto", reviewer: "policy" });
    expect(next.decision?.comment).toBe(`learned trust rule ${rule.id} (files.write, 4 approvals)`);
    const created = (await airlock.audit({ requestId: next.id }))[0];
    expect(created?.data.policy).toContain(rule.id);

    // Another shape, or another action, still waits for a person.
    const wider = write("/tmp/w", { args: { path: "/tmp/w", content: "x", append: true } });
    expect((await decided("none", wider)).status).toBe("pending");
    expect((await decided("none", write("/tmp/d", { action: "files.delete" }))).status).toBe(
      "pending",
    );
    await expect(
      trust.accept({ action: "files.write", shapeHash: hash }, "root"),
    ).rejects.toMatchObject({ code: "conflict", message: /already approved by rule/ });

    const revoked = await trust.revoke(rule.id, "root");
    expect(revoked).toMatchObject({ id: rule.id, revokedBy: "root" });
    expect((await decided("none")).status).toBe("pending");
    await expect(trust.revoke(rule.id, "root")).rejects.toMatchObject({ code: "conflict" });
    await expect(trust.revoke("trust_nope", "root")).rejects.toMatchObject({ code: "not_found" });
    expect(await trust.rules({ includeRevoked: true })).toEqual([revoked]);

    const kinds = (await airlock.audit({}))
      .filter((e) => e.requestId === undefined)
      .map((e) => [e.type, e.actor, e.data.kind, e.data.ruleId]);
    expect(kinds).toEqual([
      ["notified", "root", TRUST_RULE_ACCEPTED, rule.id],
      ["notified", "root", TRUST_RULE_REVOKED, rule.id],
    ]);
    expect(await airlock.verifyAudit()).toMatchObject({ ok: true });
  });

  it("a rule accepted or revoked elsewhere applies after the cache time; unreadable rules ask a person", async () => {
    let clock = 1_000;
    const policy = learnedTrustPolicy(store, { ttlMs: 500, now: () => clock });
    const other = createLearnedTrust({ store, threshold: 3 });
    for (let i = 0; i < 3; i++) await decided("approve");
    const input = requestInputSchema.parse(write("/tmp/f"));
    const ask = () => policy({ input });
    expect(await ask()).toBeUndefined();
    const hash = argsShapeHash({ path: "", content: "" });
    const rule = await other.accept({ action: "files.write", shapeHash: hash }, "root");
    expect(await ask()).toBeUndefined(); // cached: no rule yet
    clock += 500;
    expect(await ask()).toMatchObject({ level: "auto", reason: expect.stringContaining(rule.id) });
    await other.revoke(rule.id, "root");
    policy.invalidate();
    expect(await ask()).toBeUndefined();

    const broken = learnedTrustPolicy({
      listTrustRules: async () => {
        throw new Error("database gone");
      },
    });
    expect(await broken({ input })).toBeUndefined();
  });
});
