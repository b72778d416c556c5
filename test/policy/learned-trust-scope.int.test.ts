// Learned trust never approves more than what earned it (issue 31, finding 2), on SQLite and on
// PostgreSQL: after five approvals of `{cmd: "ls -la"}` by real reviewers, another agent's
// `rm -rf /` at risk critical, naming other approvers and a quorum of 3, goes to a person, and so
// does each of those differences alone; approvals the requester could reach (its own identity, a
// chat it relays, the policy) earn nothing; the suggestion and the rule name the distinct people
// behind the run; an admin widens a rule only explicitly, and that is audited.
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RequestInput } from "../../src/core/schemas.js";
import type { Store } from "../../src/core/store.js";
import { TRUST_RULE_ACCEPTED, type TrustRule } from "../../src/core/trust-rule.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { argsShapeHash } from "../../src/policy/args-shape.js";
import { createLearnedTrust, type LearnedTrust } from "../../src/policy/learned-trust.js";
import { postgresStore } from "../../src/store/postgres.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { describePg, dropSchema, freshSchema } from "../postgres/pg-env.js";

const THRESHOLD = 5;
const shell = (cmd: string, over: Partial<RequestInput> = {}): RequestInput => ({
  title: `run ${cmd}`,
  action: "shell.exec",
  args: { cmd },
  requester: "agent-a",
  ...over,
});
const SHAPE = argsShapeHash({ cmd: "" });

function scopeSuite(name: string, open: () => Promise<Store>): void {
  describe(`learned trust scope (${name})`, () => {
    let store: Store;
    let trust: LearnedTrust;
    let airlock: Airlock;

    beforeEach(async () => {
      store = await open();
      // ttlMs 0: every call reads the rules from the store, as another server process would.
      trust = createLearnedTrust({ store, threshold: THRESHOLD, ttlMs: 0 });
      airlock = await createAirlock({ store, policy: trust.policy, sweeper: false });
    });
    afterEach(async () => {
      await airlock.close();
    });

    /** A request approved by `reviewers` (one approval each, through `channel`). */
    async function approved(
      input: RequestInput,
      reviewers = ["alice"],
      channel: "api" | "chat" | "web" = "api",
    ) {
      const r = await airlock.request(input);
      expect(r.status).toBe("pending");
      for (const reviewer of reviewers) {
        await airlock.decide(r.id, { outcome: "approved", reviewer, channel });
      }
      return airlock.get(r.id);
    }

    /** Five approvals of `ls -la` by alice and bob, accepted as a rule by root. */
    async function earned(widen?: { anyRequester?: boolean; anyValue?: string[] }) {
      for (const reviewer of ["alice", "bob", "alice", "bob", "alice"]) {
        await approved(shell("ls -la"), [reviewer]);
      }
      return trust.accept(
        { action: "shell.exec", shapeHash: SHAPE, ...(widen ? { widen } : {}) },
        "root",
      );
    }

    const status = async (input: RequestInput) => (await airlock.request(input)).status;

    it("the attack goes to a person, and so does each of its differences alone; the honest call is approved", async () => {
      const rule = await earned();
      expect(rule.scope).toMatchObject({
        requesters: ["agent-a"],
        reviewers: ["alice", "bob"],
        maxQuorum: 1,
        approverSets: [[]],
        values: [
          { path: "/args/cmd", oneOf: ["ls -la"] },
          { path: "/items", length: { min: 0, max: 0 } },
        ],
      });
      expect(rule.scope?.maxRisk).toBeUndefined();
      // The exact attack of the issue.
      const attack = shell("rm -rf / --no-preserve-root", {
        requester: "agent-b",
        risk: "critical",
        approvers: ["ops", "sre"],
        quorum: 3,
      });
      expect(await status(attack)).toBe("pending");
      // Each difference alone.
      expect(await status(shell("ls -la", { requester: "agent-b" }))).toBe("pending");
      expect(await status(shell("ls -la", { risk: "critical" }))).toBe("pending");
      expect(await status(shell("ls -la", { quorum: 3 }))).toBe("pending");
      expect(await status(shell("ls -la", { approvers: ["ops"] }))).toBe("pending");
      expect(await status(shell("rm -rf / --no-preserve-root"))).toBe("pending");
      expect(await status(shell("ls -la", { items: ["and also rm -rf /"] }))).toBe("pending");
      // The honest case: the same call as the approved ones, from the same agent.
      const same = await airlock.request(shell("ls -la"));
      expect(same.status).toBe("approved");
      expect(same.decision).toMatchObject({ method: "auto", reviewer: "policy" });
      expect(same.decision?.comment).toBe(
        `learned trust rule ${rule.id} (shell.exec, 5 approvals)`,
      );
      // A fresh LearnedTrust on the same store reads the same scope back (the stored rule).
      const reread = createLearnedTrust({ store, threshold: THRESHOLD });
      expect(await reread.rules()).toEqual([rule]);
    });

    it("learns a small enumeration of strings and the range of numbers; a field that varies too much approves nothing unless widened", async () => {
      const tail = (file: string, lines: number, over: Partial<RequestInput> = {}) =>
        shell("tail", { action: "logs.tail", args: { file, lines }, ...over });
      const files = ["a.log", "b.log", "a.log", "c.log", "b.log"];
      for (const [i, file] of files.entries()) await approved(tail(file, 10 + i * 5), ["carol"]);
      const tailShape = argsShapeHash({ file: "", lines: 0 });
      const [s] = await trust.suggestions();
      expect(s?.scope.values).toEqual([
        { path: "/args/file", oneOf: ["a.log", "b.log", "c.log"] },
        { path: "/args/lines", range: { min: 10, max: 30 } },
        { path: "/items", length: { min: 0, max: 0 } },
      ]);
      expect(s?.scope.reviewers).toEqual(["carol"]);
      await trust.accept({ action: "logs.tail", shapeHash: tailShape }, "root");
      expect(await status(tail("b.log", 30))).toBe("approved");
      expect(await status(tail("b.log", 10))).toBe("approved");
      expect(await status(tail("d.log", 20))).toBe("pending");
      expect(await status(tail("a.log", 31))).toBe("pending");
      expect(await status(tail("a.log", 9))).toBe("pending");

      // Six distinct commands (more than five): not approvable without widening.
      const cmds = ["ls", "ls -l", "ls -la", "pwd", "whoami", "date"];
      for (const cmd of cmds) await approved(shell(cmd), ["dave"]);
      const [v] = (await trust.suggestions()).filter((x) => x.action === "shell.exec");
      expect(v?.scope.values[0]).toEqual({
        path: "/args/cmd",
        varies: "more than 5 distinct values",
      });
      await expect(
        trust.accept({ action: "shell.exec", shapeHash: SHAPE }, "root"),
      ).rejects.toMatchObject({
        code: "invalid_input",
        message: expect.stringMatching(/`\/args\/cmd` took more than 5 distinct values.*anyValue/),
      });
      await expect(
        trust.accept(
          { action: "shell.exec", shapeHash: SHAPE, widen: { anyValue: ["/args/nope"] } },
          "root",
        ),
      ).rejects.toMatchObject({ code: "invalid_input", message: /`\/args\/nope` is not a field/ });
      expect(await trust.rules()).toHaveLength(1);
      expect(await status(shell("uptime"))).toBe("pending");
    });

    it("approvals the requester can reach earn nothing: its own identity, a chat it relays, the policy", async () => {
      // Four real approvals...
      for (let i = 0; i < 4; i++) await approved(shell("ls -la"), ["alice"]);
      // ...and then approvals through a chat (an approval card or an agent's chat relays them),
      await approved(shell("ls -la"), ["bob"], "chat");
      // (a quorum of two, one seat of which came through a chat, counts no more),
      const q = await airlock.request(shell("ls -la", { quorum: 2 }));
      await airlock.decide(q.id, { outcome: "approved", reviewer: "alice" });
      await airlock.decide(q.id, { outcome: "approved", reviewer: "bob", channel: "chat" });
      expect((await airlock.get(q.id)).status).toBe("approved");
      // by the policy (requireApproval: false is the policy approving),
      await airlock.request(shell("ls -la", { requireApproval: false }));
      // and one recorded under the requester's own identity (the engine refuses it today; a store
      // written by an older version, or by hand, may hold one).
      const own = await airlock.request(shell("ls -la"));
      const now = Date.now();
      const self = {
        outcome: "approved" as const,
        method: "approve_all" as const,
        reviewer: "agent-a",
        channel: "api" as const,
        decidedAt: now,
        argsHash: own.argsHash,
      };
      const { deadline: _deadline, ...rest } = own;
      const forged = {
        ...rest,
        status: "approved" as const,
        decisions: [self],
        decision: self,
        updatedAt: now,
        version: own.version + 1,
      };
      expect((await store.transition(forged, own.version, [])).ok).toBe(true);
      expect((await airlock.get(own.id)).decision?.reviewer).toBe("agent-a");

      // None of them counts: four approvals by people, one short of the threshold.
      expect(await trust.suggestions()).toEqual([]);
      await expect(
        trust.accept({ action: "shell.exec", shapeHash: SHAPE }, "root"),
      ).rejects.toMatchObject({
        code: "conflict",
      });
      // A fifth approval by a person makes the run, naming the people behind it.
      await approved(shell("ls -la"), ["Bob "]);
      const [s] = await trust.suggestions();
      expect(s).toMatchObject({ streak: 5, scope: { reviewers: ["alice", "bob"], maxQuorum: 1 } });
    });

    it("an admin widens a rule only explicitly, and the audit says how; risk, quorum and approvers still hold", async () => {
      const rule = await earned({ anyRequester: true, anyValue: ["/args/cmd"] });
      expect(rule.scope).toMatchObject({ anyRequester: true, requesters: ["agent-a"] });
      expect(rule.scope?.values[0]).toEqual({ path: "/args/cmd", oneOf: ["ls -la"], any: true });
      expect(await status(shell("uname -a", { requester: "agent-b" }))).toBe("approved");
      expect(await status(shell("uname -a", { requester: "agent-b", risk: "high" }))).toBe(
        "pending",
      );
      expect(await status(shell("uname -a", { quorum: 2 }))).toBe("pending");
      expect(await status(shell("uname -a", { approvers: ["ops"] }))).toBe("pending");
      const accepted = (await airlock.audit({})).filter((e) => e.data.kind === TRUST_RULE_ACCEPTED);
      expect(accepted).toHaveLength(1);
      expect(accepted[0]).toMatchObject({
        actor: "root",
        data: {
          ruleId: rule.id,
          requesters: "any",
          reviewers: ["alice", "bob"],
          widened: { anyRequester: true, anyValue: ["/args/cmd"] },
        },
      });
      expect(await airlock.verifyAudit()).toMatchObject({ ok: true });
    });

    it("arrays: each element among the values seen, the length within those seen; odd keys keep apart", async () => {
      const tag = (tags: unknown[], odd = "x") => ({
        title: "tag",
        action: "repo.tag",
        args: { tags, "a/b": odd, "*": odd },
        requester: "agent-a",
      });
      for (const tags of [["v1", "v2"], ["v2", "v1"], ["v1"], ["v2", "v2"], ["v1", "v2"]]) {
        await approved(tag(tags), ["erin"]);
      }
      const [s] = await trust.suggestions();
      expect(s?.scope.values).toEqual([
        { path: "/args/a~1b", oneOf: ["x"] },
        { path: "/args/tags", length: { min: 1, max: 2 } },
        { path: "/args/tags/*", oneOf: ["v1", "v2"] },
        { path: "/args/~2", oneOf: ["x"] },
        { path: "/items", length: { min: 0, max: 0 } },
      ]);
      await trust.accept({ action: "repo.tag", shapeHash: s?.shapeHash ?? "" }, "root");
      expect(await status(tag(["v2"]))).toBe("approved");
      expect(await status(tag(["v1", "v3"]))).toBe("pending");
      expect(await status(tag(["v1", "v1", "v2"]))).toBe("pending");
      expect(await status(tag(["v1"], "y"))).toBe("pending");
    });

    it("a rule stored before scopes existed approves nothing; its call is suggested again", async () => {
      for (let i = 0; i < THRESHOLD; i++) await approved(shell("ls -la"), ["alice"]);
      const legacy: TrustRule = {
        id: "trust_00000000000000000000000000",
        action: "shell.exec",
        shapeHash: SHAPE,
        shape: '{"cmd":string}',
        approvals: THRESHOLD,
        createdBy: "root",
        createdAt: Date.now(),
      };
      await store.insertTrustRule?.(legacy, []);
      expect(await status(shell("ls -la"))).toBe("pending");
      expect((await trust.suggestions()).map((s) => s.action)).toEqual(["shell.exec"]);
      await expect(
        trust.accept({ action: "shell.exec", shapeHash: SHAPE }, "root"),
      ).rejects.toMatchObject({
        code: "conflict",
        message: /approves nothing: revoke it/,
      });
      await trust.revoke(legacy.id, "root");
      await trust.accept({ action: "shell.exec", shapeHash: SHAPE }, "root");
      expect(await status(shell("ls -la"))).toBe("approved");
    });
  });
}

scopeSuite("sqlite", async () => sqliteStore(":memory:"));

await describePg("learned trust scope on PostgreSQL", ({ url }) => {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const s of schemas) await dropSchema(url, s);
  });
  scopeSuite("postgres", async () => {
    const schema = freshSchema("airlock_trust_scope");
    schemas.push(schema);
    return postgresStore(url, { schema, max: 2 });
  });
});
