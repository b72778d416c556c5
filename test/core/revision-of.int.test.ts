// `revisionOf` names a request of the same requester that was sent back for revision, or the new
// request is refused (422 invalid_input on `revisionOf`): one agent cannot present its request as the
// revision of another agent's reviewed plan. On SQLite and PostgreSQL; a replay with the same key still
// returns the first request.
import { afterEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/core/store.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { postgresStore } from "../../src/store/postgres.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";
import { describePg, dropSchema, freshSchema } from "../postgres/pg-env.js";
import { startOwnServer } from "../server/own-server.js";

const plan = (v: number, extra: Record<string, unknown> = {}) => ({
  title: `Plan v${v}`,
  allowed: ["approve", "reject", "revise"] as ("approve" | "reject" | "revise")[],
  args: { steps: v },
  ...extra,
});

function revisionRules(open: () => { store: Store; cleanup: () => Promise<void> }) {
  let engine: Airlock | undefined;
  let store: Store;
  let cleanup: (() => Promise<void>) | undefined;
  const start = async () => {
    const opened = open();
    store = opened.store;
    cleanup = opened.cleanup;
    engine = await createAirlock({ store });
    return engine;
  };
  afterEach(async () => {
    await engine?.close();
    await cleanup?.();
    engine = undefined;
    cleanup = undefined;
  });

  it("accepts a revision of the same requester's request in status revise, under any spelling of the name", async () => {
    const e = await start();
    const first = await e.request(plan(1, { requester: "planner" }));
    await e.decide(first.id, { outcome: "revise", reviewer: "alice", comment: "fewer steps" });
    const second = await e.request(plan(2, { requester: "Planner", revisionOf: first.id }));
    expect(second.revisionOf).toBe(first.id);
    expect(second.requester).toBe("planner");
  });

  it("refuses another requester's request, one not in revise, and an unknown id, with a clear detail", async () => {
    const e = await start();
    const theirs = await e.request(plan(1, { requester: "agent-a" }));
    await e.decide(theirs.id, { outcome: "revise", reviewer: "alice" });
    await expect(
      e.request(plan(2, { requester: "agent-b", revisionOf: theirs.id })),
    ).rejects.toMatchObject({
      code: "invalid_input",
      field: "revisionOf",
      message: `invalid request: \`revisionOf\`: no request \`${theirs.id}\` of requester \`agent-b\`; a revision names one of its requester's own requests`,
    });

    const pending = await e.request(plan(1, { requester: "agent-b" }));
    await expect(
      e.request(plan(2, { requester: "agent-b", revisionOf: pending.id })),
    ).rejects.toMatchObject({
      code: "invalid_input",
      field: "revisionOf",
      message: `invalid request: \`revisionOf\`: request \`${pending.id}\` is \`pending\`, not \`revise\` or \`responded\`; only a request sent back for revision (or answered with a response) can be revised`,
    });
    const approved = await e.request(plan(3, { requester: "agent-b" }));
    await e.decide(approved.id, { outcome: "approved", reviewer: "alice" });
    await expect(
      e.request(plan(4, { requester: "agent-b", revisionOf: approved.id })),
    ).rejects.toMatchObject({
      field: "revisionOf",
      message: /is `approved`, not `revise` or `responded`/,
    });

    await expect(
      e.request(plan(2, { requester: "agent-b", revisionOf: "req_nope" })),
    ).rejects.toMatchObject({
      code: "invalid_input",
      field: "revisionOf",
      message: /no request `req_nope` of requester `agent-b`/,
    });
    // Nothing was created by the refusals.
    expect((await e.list({ requester: "agent-b" })).items).toHaveLength(2);
  });

  it("a replay with the same key returns the first request, even once the revised one has been pruned", async () => {
    const e = await start();
    const first = await e.request(plan(1, { requester: "planner" }));
    await e.decide(first.id, { outcome: "revise", reviewer: "alice" });
    const input = plan(2, { requester: "planner", key: "plan-2", revisionOf: first.id });
    const second = await e.request(input);
    expect((await e.request(input)).id).toBe(second.id);

    const pruned = await store.prune?.({ before: Date.now() + 60_000 });
    expect(pruned?.requests).toBe(1);
    await expect(e.get(first.id)).rejects.toMatchObject({ code: "not_found" });
    expect((await e.request(input)).id).toBe(second.id);
    // Without the key's replay, the same revision is now refused.
    await expect(e.request({ ...input, key: "plan-2-again" })).rejects.toMatchObject({
      code: "invalid_input",
      field: "revisionOf",
    });
  });
}

describe("revisionOf on SQLite", () => {
  revisionRules(() => {
    const t = tempDir("airlock-revision-");
    return { store: sqliteStore(`${t.dir}/airlock.db`), cleanup: async () => t.cleanup() };
  });
});

await describePg("revisionOf on PostgreSQL", ({ url }) => {
  revisionRules(() => {
    const schema = freshSchema("airlock_revision");
    return {
      store: postgresStore(url, { schema, max: 2 }),
      cleanup: () => dropSchema(url, schema),
    };
  });
});

describe("revisionOf over HTTP", () => {
  it("another agent's request is a 422 problem naming revisionOf", async () => {
    const s = await startOwnServer({
      "agent-a": { roles: ["agent"] },
      "agent-b": { roles: ["agent"] },
      alice: { roles: ["reviewer"] },
    });
    try {
      const a = await s.call(s.tokens["agent-a"], "POST", "/v1/requests", plan(1));
      expect(a.status).toBe(201);
      const revised = await s.call(s.tokens.alice, "POST", `/v1/requests/${a.body.id}/decisions`, {
        outcome: "revise",
        comment: "split it",
      });
      expect(revised.body.status).toBe("revise");
      const b = await s.call(
        s.tokens["agent-b"],
        "POST",
        "/v1/requests",
        plan(2, { revisionOf: a.body.id }),
      );
      expect(b.status).toBe(422);
      expect(b.headers.get("content-type")).toContain("application/problem+json");
      expect(b.body.detail).toContain(`no request \`${a.body.id}\` of requester \`agent-b\``);
      const own = await s.call(
        s.tokens["agent-a"],
        "POST",
        "/v1/requests",
        plan(2, { revisionOf: a.body.id }),
      );
      expect(own.status).toBe(201);
      expect(own.body.revisionOf).toBe(a.body.id);
    } finally {
      await s.close();
    }
  });
});
