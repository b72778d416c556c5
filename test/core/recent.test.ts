// The engine starts a decision or a claim from the copy of a request it wrote last (recent.ts). These
// tests make that copy old, through a second engine on the same database, and check the answer is the
// one a fresh read would give.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isAirlockError } from "../../src/core/errors.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { recentRequests } from "../../src/engine/recent.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function twoEngines(): Promise<[Airlock, Airlock]> {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const file = join(t.dir, "airlock.db");
  const a = await createAirlock({ store: sqliteStore(file) });
  const b = await createAirlock({ store: sqliteStore(file) });
  cleanups.push(
    () => a.close(),
    () => b.close(),
  );
  return [a, b];
}

async function refusal(p: Promise<unknown>) {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected a refusal");
}

describe("decisions from a remembered copy of the request", () => {
  it("a decision made elsewhere since wins, and the conflict names it", async () => {
    const [a, b] = await twoEngines();
    const r = await a.request({ title: "deploy", requester: "agent", approvers: ["alice", "bob"] });
    await b.decide(r.id, { outcome: "approved", reviewer: "bob" });
    const err = await refusal(a.decide(r.id, { outcome: "rejected", reviewer: "alice" }));
    expect(isAirlockError(err) && err.code).toBe("conflict");
    expect(String((err as Error).message)).toContain("bob");
    const stored = await a.get(r.id);
    expect(stored.status).toBe("approved");
    expect(stored.decisions).toHaveLength(1);
  });

  /** A request that needs both alice and bob. */
  const twoApprovals = (engine: Airlock) =>
    engine.request({ title: "pay", requester: "agent", approvers: ["alice", "bob"], quorum: 2 });

  it("a retried decision already recorded elsewhere is a replay, not a second vote", async () => {
    const [a, b] = await twoEngines();
    const r = await twoApprovals(a);
    await b.decide(r.id, { outcome: "approved", reviewer: "bob", key: "k1" });
    const replay = await a.decide(r.id, { outcome: "approved", reviewer: "bob", key: "k1" });
    expect(replay.status).toBe("pending");
    expect(replay.decisions).toHaveLength(1);
    expect((await a.get(r.id)).version).toBe(replay.version);
  });

  it("a replay answers with the request as it is now, not as this engine last saw it", async () => {
    const [a, b] = await twoEngines();
    const r = await twoApprovals(a);
    await a.decide(r.id, { outcome: "approved", reviewer: "bob", key: "k1" });
    await b.decide(r.id, { outcome: "approved", reviewer: "alice" });
    const replay = await a.decide(r.id, { outcome: "approved", reviewer: "bob", key: "k1" });
    expect(replay.status).toBe("approved");
    expect(replay.decisions).toHaveLength(2);
  });

  it("a claim made elsewhere since is not claimed twice", async () => {
    const [a, b] = await twoEngines();
    const r = await a.request({ title: "ship", requester: "agent" });
    await a.decide(r.id, { outcome: "approved", reviewer: "alice" });
    const first = await b.claimExecution(r.id, { by: "agent" });
    const err = await refusal(a.claimExecution(r.id, { by: "agent" }));
    expect(isAirlockError(err) && err.code).toBe("conflict");
    expect((await a.get(r.id)).executedAt).toBe(first.executedAt);
  });

  it("changing a request the engine handed out changes nothing stored", async () => {
    const [a] = await twoEngines();
    const r = await a.request({ title: "original", requester: "agent", items: ["one"] });
    r.title = "changed by the caller";
    r.approvers.push("mallory");
    const decided = await a.decide(r.id, { outcome: "approved", reviewer: "alice" });
    expect(decided.title).toBe("original");
    expect(decided.approvers).not.toContain("mallory");
    expect((await a.get(r.id)).title).toBe("original");
  });
});

describe("recentRequests", () => {
  it("keeps the newest version and drops the least recently used past its capacity", () => {
    const recent = recentRequests(2);
    const doc = (id: string, version: number) =>
      ({ id, version, title: `${id}@${version}` }) as unknown as Parameters<
        typeof recent.remember
      >[0];
    recent.remember(doc("a", 2));
    recent.remember(doc("a", 1));
    expect(recent.get("a")?.version).toBe(2);
    recent.remember(doc("b", 1));
    recent.remember(doc("c", 1));
    expect(recent.get("a")).toBeUndefined();
    expect(recent.get("b")?.title).toBe("b@1");
    const copy = recent.get("c");
    if (copy) copy.title = "mutated";
    expect(recent.get("c")?.title).toBe("c@1");
    recent.forget("c");
    expect(recent.get("c")).toBeUndefined();
  });
});
