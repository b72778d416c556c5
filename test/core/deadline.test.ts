// A deadline is a deadline (issue 10 item 10): a decision or cancellation that arrives after it loses
// to the timeout even when no sweeper ran, and every engine's sweeper hears new deadlines at once.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { activeDeadline, isOverdue } from "../../src/core/state.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { memoryStore } from "../../src/store/memory.js";
import { sqliteStore } from "../../src/store/sqlite.js";

const engines: Airlock[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) await e.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function late() {
  const clock = { t: 1_700_000_000_000 };
  // No sweeper: only the state machine stands between a late decision and the gate.
  const engine = await createAirlock({
    store: memoryStore(),
    clock: { now: () => clock.t },
    sweeper: false,
  });
  engines.push(engine);
  return { engine, clock };
}

const base = { title: "Deploy v2", requester: "agent" } as const;
const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/;

describe("a decision after the deadline", () => {
  it("loses to the timeout, with a conflict naming it", async () => {
    const { engine, clock } = await late();
    const r = await engine.request({ ...base, timeoutMs: 2000 });
    clock.t += 2000;
    const err = await engine
      .decide(r.id, { outcome: "approved", reviewer: "alice" })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "conflict", request: { status: "timed_out" } });
    expect((err as Error).message).toMatch(
      new RegExp(`^request ${r.id} timed out at ${ISO.source} before this decision arrived$`),
    );
    const stored = await engine.get(r.id);
    expect(stored.status).toBe("timed_out");
    expect(stored.deadline).toBeUndefined();
    const types = (await engine.audit({ requestId: r.id })).map((e) => e.type);
    expect(types).toEqual(["created", "timed_out"]);
  });

  it("one millisecond before the deadline still counts", async () => {
    const { engine, clock } = await late();
    const r = await engine.request({ ...base, timeoutMs: 2000 });
    clock.t += 1999;
    expect((await engine.decide(r.id, { outcome: "approved", reviewer: "alice" })).status).toBe(
      "approved",
    );
  });

  it("a cancellation after the deadline loses too", async () => {
    const { engine, clock } = await late();
    const r = await engine.request({ ...base, timeoutMs: 2000, onTimeout: "approve" });
    clock.t += 5000;
    await expect(engine.cancel(r.id, { reason: "too late" })).rejects.toMatchObject({
      code: "conflict",
      message: expect.stringMatching(
        /approved by its deadline rule at .* before this decision arrived/,
      ),
    });
    expect((await engine.get(r.id)).decision).toMatchObject({
      method: "timeout",
      outcome: "approved",
    });
  });

  it("after an overdue escalation only the new approvers decide", async () => {
    const { engine, clock } = await late();
    const r = await engine.request({
      ...base,
      approvers: ["oncall"],
      timeoutMs: 1000,
      onTimeout: { escalate: { approvers: ["Leads"], timeoutMs: 60_000 } },
    });
    clock.t += 1500;
    await expect(
      engine.decide(r.id, { outcome: "approved", reviewer: "x", groups: ["oncall"] }),
    ).rejects.toMatchObject({ code: "forbidden" });
    const escalated = await engine.get(r.id);
    expect(escalated).toMatchObject({ status: "pending", approvers: ["leads"], escalations: 1 });
    expect(escalated.deadline).toBe(clock.t + 60_000);
    const d = await engine.decide(r.id, { outcome: "approved", reviewer: "y", groups: ["leads"] });
    expect(d.status).toBe("approved");
    const types = (await engine.audit({ requestId: r.id })).map((e) => e.type);
    expect(types).toEqual(["created", "escalated", "decided"]);
  });
});

describe("isOverdue", () => {
  it("is true from the deadline on, and only while pending", async () => {
    const { engine, clock } = await late();
    const r = await engine.request({ ...base, timeoutMs: 1000 });
    expect(activeDeadline(r)).toBe(clock.t + 1000);
    expect(isOverdue(r, clock.t + 999)).toBe(false);
    expect(isOverdue(r, clock.t + 1000)).toBe(true);
    const open = await engine.request({ ...base });
    expect(isOverdue(open, Number.MAX_SAFE_INTEGER)).toBe(false);
    // A stale copy of a decided request still carrying its deadline is not overdue.
    const decided = { ...r, status: "approved" as const };
    expect(activeDeadline(decided)).toBeUndefined();
    expect(isOverdue(decided, clock.t + 5000)).toBe(false);
  });
});

describe("every engine's sweeper hears new deadlines at once", () => {
  it("times out a request created by another engine with nobody waiting", async () => {
    const dir = mkdtempSync(join(tmpdir(), "airlock-deadline-"));
    dirs.push(dir);
    const file = join(dir, "airlock.db");
    // The sweeper's own sleep is a minute: only the feed can tell it of the new deadline in time.
    const sweeping = await createAirlock({ store: sqliteStore(file), sweepMaxSleepMs: 60_000 });
    engines.push(sweeping);
    const creator = await createAirlock({ store: sqliteStore(file), sweeper: false });
    engines.push(creator);
    const r = await creator.request({ ...base, timeoutMs: 300 });
    let status = "pending";
    for (let i = 0; i < 100 && status === "pending"; i++) {
      await new Promise((res) => setTimeout(res, 50));
      status = (await creator.get(r.id)).status;
    }
    expect(status).toBe("timed_out");
  });
});
