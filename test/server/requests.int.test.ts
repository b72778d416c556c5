// The request routes over real HTTP: create (idempotency, mass assignment), list, read, decide,
// cancel, audit, and every error status with its problem+json body.
import { connect } from "node:net";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createAirlock } from "../../src/engine/engine.js";
import { createServer } from "../../src/server/server.js";
import { createToken, memoryTokenStore } from "../../src/server/tokens.js";
import { memoryStore } from "../../src/store/memory.js";
import { call, gate, startTestServer, type TestServer } from "./helpers.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({
    schemas: {
      "files.write": z.object({ path: z.string().startsWith("src/"), content: z.string() }),
    },
  });
});
afterAll(async () => {
  await s.close();
});

function expectProblem(
  r: { status: number; headers: Headers; body: Record<string, unknown> },
  status: number,
  code: string,
) {
  expect(r.status).toBe(status);
  expect(r.headers.get("content-type")).toBe("application/problem+json");
  expect(r.body).toMatchObject({ status, code, type: `urn:airlock:problem:${code}` });
  expect(typeof r.body.title).toBe("string");
  expect(typeof r.body.detail).toBe("string");
}

describe("POST /v1/requests", () => {
  it("creates a request whose requester is the token's principal, with its Location", async () => {
    const r = await s.call(
      s.tokens.agent,
      "POST",
      "/v1/requests",
      gate("Deploy", { approvers: ["ops"] }),
    );
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      title: "Deploy",
      requester: "bot",
      status: "pending",
      approvers: ["ops"],
    });
    expect(r.headers.get("location")).toBe(`/v1/requests/${r.body.id}`);
  });

  it("is idempotent by the body's key and by the Idempotency-Key header", async () => {
    const a = await s.call(s.tokens.agent, "POST", "/v1/requests", gate("Once", { key: "k-body" }));
    const b = await s.call(s.tokens.agent, "POST", "/v1/requests", gate("Once", { key: "k-body" }));
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body.id).toBe(a.body.id);

    const h1 = await s.call(s.tokens.agent, "POST", "/v1/requests", gate("Header"), {
      "idempotency-key": "k-head",
    });
    const h2 = await s.call(s.tokens.agent, "POST", "/v1/requests", gate("Header"), {
      "idempotency-key": "k-head",
    });
    expect(h1.body.key).toBe("k-head");
    expect(h2.body.id).toBe(h1.body.id);
  });

  it("answers 400 when the header and the body name different keys", async () => {
    const r = await s.call(s.tokens.agent, "POST", "/v1/requests", gate("X", { key: "a" }), {
      "idempotency-key": "b",
    });
    expectProblem(r, 400, "invalid_input");
    expect(r.body.field).toBe("key");
  });

  it("answers 409 when a key is reused with other content", async () => {
    await s.call(s.tokens.agent, "POST", "/v1/requests", gate("First", { key: "k-clash" }));
    const r = await s.call(
      s.tokens.agent,
      "POST",
      "/v1/requests",
      gate("Second", { key: "k-clash" }),
    );
    expectProblem(r, 409, "conflict");
  });

  it("does not reveal another principal's request through a key clash", async () => {
    const mine = await s.call(
      s.tokens.agent,
      "POST",
      "/v1/requests",
      gate("Secret plan", { key: "k-private" }),
    );
    const r = await s.call(
      s.tokens.dual,
      "POST",
      "/v1/requests",
      gate("Probe", { key: "k-private" }),
    );
    // Keys are scoped per requester: the other agent's key is its own, a new request, and nothing
    // of the first one shows.
    expect(r.status).toBe(201);
    expect(r.body.id).not.toBe(mine.body.id);
    expect(r.text).not.toContain(mine.body.id);
    expect(r.text).not.toContain("Secret plan");
  });

  it("refuses mass assignment of status and decisions (400 naming the field)", async () => {
    for (const field of ["status", "decisions", "decision", "id", "version"]) {
      const value =
        field === "decisions" ? [{ outcome: "approved" }] : field === "version" ? 9 : "approved";
      const r = await s.call(s.tokens.agent, "POST", "/v1/requests", {
        title: "Sneaky",
        [field]: value,
      });
      expectProblem(r, 400, "invalid_input");
      expect(r.body.field).toBe(field);
    }
    const list = await s.call(s.tokens.admin, "GET", "/v1/requests?limit=500");
    expect(list.body.items.some((x: { title: string }) => x.title === "Sneaky")).toBe(false);
  });

  it("refuses a requester other than the token's principal, accepts its own name", async () => {
    const other = await s.call(
      s.tokens.agent,
      "POST",
      "/v1/requests",
      gate("Impersonate", { requester: "alice" }),
    );
    expectProblem(other, 403, "forbidden");
    expect(other.body.field).toBe("requester");
    const own = await s.call(
      s.tokens.agent,
      "POST",
      "/v1/requests",
      gate("Self", { requester: "bot" }),
    );
    expect(own.status).toBe(201);
    expect(own.body.requester).toBe("bot");
  });

  it("answers 400 for malformed bodies, naming the field", async () => {
    const missing = await s.call(s.tokens.agent, "POST", "/v1/requests", { summary: "no title" });
    expectProblem(missing, 400, "invalid_input");
    expect(missing.body.field).toBe("title");

    const wrongType = await s.call(s.tokens.agent, "POST", "/v1/requests", {
      title: "t",
      quorum: "two",
    });
    expect(wrongType.body.field).toBe("quorum");

    const notJson = await s.call(s.tokens.agent, "POST", "/v1/requests", "{title: nope");
    expectProblem(notJson, 400, "invalid_input");

    const array = await s.call(s.tokens.agent, "POST", "/v1/requests", "[1,2]");
    expectProblem(array, 400, "invalid_input");
  });

  it("answers 415 when the body is not sent as JSON", async () => {
    const r = await s.call(s.tokens.agent, "POST", "/v1/requests", JSON.stringify(gate("t")), {
      "content-type": "text/plain",
    });
    expectProblem(r, 415, "unsupported_media_type");
  });

  it("answers 422 when args break the action's schema", async () => {
    const r = await s.call(s.tokens.agent, "POST", "/v1/requests", {
      title: "Write",
      action: "files.write",
      args: { path: "/etc/passwd", content: "x" },
    });
    expectProblem(r, 422, "invalid_input");
    expect(r.body.field).toBe("args.path");
  });

  it("answers 413 above the body limit, with and without Content-Length", async () => {
    const big = JSON.stringify(gate("Big", { summary: "x".repeat(1024 * 1024 + 10) }));
    const sized = await s.call(s.tokens.agent, "POST", "/v1/requests", big);
    expectProblem(sized, 413, "payload_too_large");

    const chunks = [big.slice(0, 600_000), big.slice(600_000)];
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(new TextEncoder().encode(next));
      },
    });
    const res = await fetch(`${s.url}/v1/requests`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.tokens.agent}`, "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    await res.text();
  });

  it("accepts a body just under the limit", async () => {
    const r = await s.call(
      s.tokens.agent,
      "POST",
      "/v1/requests",
      gate("Near", { summary: "y".repeat(60_000), preview: "p".repeat(250_000) }),
    );
    expect(r.status).toBe(201);
  });
});

describe("GET /v1/requests and /v1/requests/:id", () => {
  it("searches titles with q: contains, ignoring case, with paging and the other filters", async () => {
    const made: string[] = [];
    for (const title of [
      "Deploy API 1",
      "deploy api 2",
      "Rotate keys",
      "Re-deploy Api 3",
      "API docs",
    ]) {
      made.push((await s.call(s.tokens.agent, "POST", "/v1/requests", gate(title))).body.id);
    }
    const found = await s.call(s.tokens.agent, "GET", "/v1/requests?q=DEPLOY%20api&limit=2");
    expect(found.status).toBe(200);
    expect(found.body.items.map((x: { title: string }) => x.title)).toEqual([
      "Re-deploy Api 3",
      "deploy api 2",
    ]);
    const rest = await s.call(
      s.tokens.agent,
      "GET",
      `/v1/requests?q=DEPLOY%20api&limit=2&cursor=${found.body.nextCursor}`,
    );
    expect(rest.body.items.map((x: { title: string }) => x.title)).toEqual(["Deploy API 1"]);
    const summaries = await s.call(s.tokens.agent, "GET", "/v1/requests?q=%25&view=summary");
    expect(summaries.body.items).toEqual([]); // no wildcards: % is a character like any other
    const tooLong = await s.call(s.tokens.agent, "GET", `/v1/requests?q=${"x".repeat(201)}`);
    expect(tooLong.status).toBe(400);
    expect(made).toHaveLength(5);
  });

  it("pages newest first with a cursor, and filters by status", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await s.call(s.tokens.agent2, "POST", "/v1/requests", gate(`Page ${i}`));
      ids.push(r.body.id);
    }
    const first = await s.call(s.tokens.agent2, "GET", "/v1/requests?limit=2");
    expect(first.status).toBe(200);
    expect(first.body.items.map((x: { id: string }) => x.id)).toEqual([ids[4], ids[3]]);
    const second = await s.call(
      s.tokens.agent2,
      "GET",
      `/v1/requests?limit=2&cursor=${first.body.nextCursor}`,
    );
    expect(second.body.items.map((x: { id: string }) => x.id)).toEqual([ids[2], ids[1]]);

    await s.call(s.tokens.agent2, "POST", `/v1/requests/${ids[0]}/cancel`);
    const cancelled = await s.call(s.tokens.agent2, "GET", "/v1/requests?status=cancelled");
    expect(cancelled.body.items.map((x: { id: string }) => x.id)).toEqual([ids[0]]);
    const both = await s.call(
      s.tokens.agent2,
      "GET",
      "/v1/requests?status=cancelled,pending&limit=500",
    );
    expect(both.body.items).toHaveLength(5);
  });

  it("answers 400 for a bad query, naming the parameter", async () => {
    const status = await s.call(s.tokens.agent, "GET", "/v1/requests?status=maybe");
    expectProblem(status, 400, "invalid_input");
    expect(status.body.field).toBe("status");
    const limit = await s.call(s.tokens.agent, "GET", "/v1/requests?limit=0");
    expect(limit.body.field).toBe("limit");
  });

  it("reads one request; 404 as problem+json for an unknown id", async () => {
    const created = await s.call(s.tokens.agent, "POST", "/v1/requests", gate("Read me"));
    const r = await s.call(s.tokens.agent, "GET", `/v1/requests/${created.body.id}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual(created.body);
    const missing = await s.call(s.tokens.agent, "GET", "/v1/requests/req_nope");
    expectProblem(missing, 404, "not_found");
  });

  it("answers 404 problem+json for an unknown route", async () => {
    const r = await s.call(s.tokens.agent, "GET", "/v2/whatever");
    expectProblem(r, 404, "route_not_found");
  });
});

describe("POST /v1/requests/:id/decisions", () => {
  async function pending(extra: Record<string, unknown> = {}) {
    const r = await s.call(
      s.tokens.agent,
      "POST",
      "/v1/requests",
      gate("Decide me", { approvers: ["ops"], ...extra }),
    );
    return r.body.id as string;
  }

  it("records the decision with the token's principal as reviewer", async () => {
    const id = await pending();
    const r = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "approved",
      comment: "ok",
    });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("approved");
    expect(r.body.decision).toMatchObject({
      reviewer: "alice",
      channel: "api",
      comment: "ok",
      method: "approve_all",
    });
  });

  it("answers 409 with the winning decision when already decided", async () => {
    const id = await pending();
    await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "rejected",
      comment: "no",
    });
    const r = await s.call(s.tokens.admin, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "approved",
    });
    expectProblem(r, 409, "conflict");
    expect(r.body.decision).toMatchObject({
      outcome: "rejected",
      reviewer: "alice",
      comment: "no",
    });
    expect(r.body.request).toMatchObject({ id, status: "rejected" });
  });

  it("settles a race: of many concurrent deciders exactly one wins, the others get 409", async () => {
    const id = await pending();
    const results = await Promise.all(
      [s.tokens.alice, s.tokens.ops2, s.tokens.admin].map((t, i) =>
        s.call(t, "POST", `/v1/requests/${id}/decisions`, {
          outcome: i === 0 ? "approved" : "rejected",
        }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409, 409]);
    const winner = results.find((r) => r.status === 200);
    for (const loser of results.filter((r) => r.status === 409)) {
      expect(loser.body.decision).toEqual(winner?.body.decision);
    }
  });

  it("answers 422 for a selection of unknown items and for edited args that fail the schema", async () => {
    const id = await pending({ items: ["a", "b"] });
    const bad = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "approved",
      selected: ["item-9"],
    });
    expectProblem(bad, 422, "invalid_input");
    expect(bad.body.field).toBe("selected");

    const write = await s.call(s.tokens.agent, "POST", "/v1/requests", {
      title: "Write",
      action: "files.write",
      approvers: ["ops"],
      args: { path: "src/a.ts", content: "x" },
    });
    const edited = await s.call(s.tokens.alice, "POST", `/v1/requests/${write.body.id}/decisions`, {
      outcome: "approved",
      editedArgs: { path: "/etc/shadow", content: "x" },
    });
    expectProblem(edited, 422, "invalid_input");
    expect(edited.body.field).toBe("editedArgs.path");
    const still = await s.call(s.tokens.alice, "GET", `/v1/requests/${write.body.id}`);
    expect(still.body.status).toBe("pending");
  });

  it("answers 400 for malformed decisions", async () => {
    const id = await pending();
    const unknownOutcome = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "yes",
    });
    expectProblem(unknownOutcome, 400, "invalid_input");
    expect(unknownOutcome.body.field).toBe("outcome");
    const extra = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "approved",
      status: "approved",
    });
    expect(extra.body.field).toBe("status");
  });

  it("records the channel the decision arrived by (api), whatever the body claims", async () => {
    for (const claimed of ["email", "system", "slack", undefined]) {
      const id = await pending();
      const r = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
        outcome: "approved",
        ...(claimed === undefined ? {} : { channel: claimed }),
      });
      expect(r.status, String(claimed)).toBe(200);
      expect(r.body.decision.channel).toBe("api");
      expect(r.body.decisions[0].channel).toBe("api");
      const trail = await s.call(s.tokens.alice, "GET", `/v1/audit?requestId=${id}`);
      const decided = trail.body.items.find((e: { type: string }) => e.type === "decided");
      expect(JSON.stringify(decided.data)).not.toContain(`"${claimed ?? "none"}"`);
    }
  });

  it("answers 403 when the body names another reviewer or groups the token lacks", async () => {
    const id = await pending();
    const other = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "approved",
      reviewer: "bob",
    });
    expectProblem(other, 403, "forbidden");
    expect(other.body.field).toBe("reviewer");
    const groups = await s.call(s.tokens.bob, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "approved",
      groups: ["ops"],
    });
    expectProblem(groups, 403, "forbidden");
    expect(groups.body.field).toBe("groups");
    const r = await s.call(s.tokens.alice, "GET", `/v1/requests/${id}`);
    expect(r.body.status).toBe("pending");
  });

  it("answers 403 to whoever decides their own request", async () => {
    const mine = await s.call(
      s.tokens.dual,
      "POST",
      "/v1/requests",
      gate("Mine", { approvers: ["ops"] }),
    );
    const r = await s.call(s.tokens.dual, "POST", `/v1/requests/${mine.body.id}/decisions`, {
      outcome: "approved",
    });
    expectProblem(r, 403, "forbidden");
    const adminOwn = await s.call(s.tokens.admin, "POST", "/v1/requests", gate("Root's"));
    const r2 = await s.call(s.tokens.admin, "POST", `/v1/requests/${adminOwn.body.id}/decisions`, {
      outcome: "approved",
    });
    expectProblem(r2, 403, "forbidden");
  });
});

describe("POST /v1/requests/:id/cancel", () => {
  it("cancels with or without a body; a second cancel is a 409", async () => {
    const a = await s.call(s.tokens.agent, "POST", "/v1/requests", gate("Cancel A"));
    const r = await s.call(s.tokens.agent, "POST", `/v1/requests/${a.body.id}/cancel`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      status: "cancelled",
      decision: { reviewer: "bot", method: "cancel" },
    });
    const again = await s.call(s.tokens.agent, "POST", `/v1/requests/${a.body.id}/cancel`);
    expectProblem(again, 409, "conflict");

    const b = await s.call(s.tokens.agent, "POST", "/v1/requests", gate("Cancel B"));
    const withReason = await s.call(s.tokens.agent, "POST", `/v1/requests/${b.body.id}/cancel`, {
      reason: "obsolete",
    });
    expect(withReason.body.decision.comment).toBe("obsolete");
    const impersonate = await s.call(s.tokens.agent, "POST", `/v1/requests/${b.body.id}/cancel`, {
      by: "root",
    });
    expectProblem(impersonate, 403, "forbidden");
  });

  it("lets a reviewer who may decide cancel, with a reason; without one 422; others 404", async () => {
    // An agent that offers only "approve": the reviewer still has a way to say no.
    const id = (
      await s.call(
        s.tokens.agent,
        "POST",
        "/v1/requests",
        gate("Approve only", { approvers: ["ops"], allowed: ["approve"] }),
      )
    ).body.id;
    const bare = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/cancel`);
    expectProblem(bare, 422, "invalid_input");
    expect(bare.body.field).toBe("reason");
    const blank = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/cancel`, {
      reason: "   ",
    });
    expectProblem(blank, 422, "invalid_input");
    // Bob (finance) may not decide it, so he cannot see it either.
    const outsider = await s.call(s.tokens.bob, "POST", `/v1/requests/${id}/cancel`, {
      reason: "no",
    });
    expectProblem(outsider, 404, "not_found");

    const r = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/cancel`, {
      reason: "the agent offered no way to refuse",
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      status: "cancelled",
      decision: {
        reviewer: "alice",
        method: "cancel",
        comment: "the agent offered no way to refuse",
      },
    });
  });
});

describe("API answers and caches", () => {
  it("marks every API answer carrying requests as Cache-Control: no-store, problems included", async () => {
    const created = await s.call(
      s.tokens.agent,
      "POST",
      "/v1/requests",
      gate("Private args", { args: { token: "x" }, key: "cache-key" }),
    );
    expect(created.headers.get("cache-control")).toBe("no-store");
    for (const path of [
      `/v1/requests/${created.body.id}`,
      "/v1/requests",
      `/v1/audit?requestId=${created.body.id}`,
    ]) {
      const r = await s.call(s.tokens.agent, "GET", path);
      expect(r.status, path).toBe(200);
      expect(r.headers.get("cache-control"), path).toBe("no-store");
    }
    const clash = await s.call(
      s.tokens.agent,
      "POST",
      "/v1/requests",
      gate("Other content", { key: "cache-key" }),
    );
    expect(clash.status).toBe(409);
    expect(clash.headers.get("cache-control")).toBe("no-store");
  });
});

describe("identities", () => {
  it("normalises token names and groups when tokens are created, so Alice and alice are one", async () => {
    const made = await s.call(s.tokens.admin, "POST", "/v1/tokens", {
      name: "  BOT ",
      roles: ["reviewer"],
      groups: ["OPS", "Ops"],
    });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ name: "bot", groups: ["ops"] });
    // "BOT" is bot: it sees bot's requests, and may not approve them (no self-approval).
    const id = (
      await s.call(s.tokens.agent, "POST", "/v1/requests", gate("Mine", { approvers: ["ops"] }))
    ).body.id;
    expect((await s.call(made.body.token, "GET", `/v1/requests/${id}`)).status).toBe(200);
    const self = await s.call(made.body.token, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "approved",
    });
    expect(self.status).toBe(403);
    // Naming oneself in another case is naming oneself.
    const named = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "approved",
      reviewer: "Alice",
    });
    expect(named.status).toBe(200);
    expect(named.body.decision.reviewer).toBe("alice");
    // So is naming one's group in another case.
    const other = (
      await s.call(
        s.tokens.agent,
        "POST",
        "/v1/requests",
        gate("Group case", { approvers: ["ops"] }),
      )
    ).body.id;
    const grouped = await s.call(s.tokens.alice, "POST", `/v1/requests/${other}/decisions`, {
      outcome: "approved",
      groups: ["OPS"],
    });
    expect(grouped.status).toBe(200);
  });
});

describe("GET /v1/audit and /v1/audit/verify", () => {
  it("gives a request's events to those who may see it, the whole log to admins, pages by seq", async () => {
    const c = await s.call(
      s.tokens.agent,
      "POST",
      "/v1/requests",
      gate("Audited", { approvers: ["ops"] }),
    );
    await s.call(s.tokens.alice, "POST", `/v1/requests/${c.body.id}/decisions`, {
      outcome: "approved",
    });
    const own = await s.call(s.tokens.agent, "GET", `/v1/audit?requestId=${c.body.id}`);
    expect(own.status).toBe(200);
    expect(own.body.items.map((e: { type: string }) => e.type)).toEqual(["created", "decided"]);

    const page = await s.call(s.tokens.admin, "GET", "/v1/audit?limit=3");
    expect(page.body.items).toHaveLength(3);
    const next = await s.call(
      s.tokens.admin,
      "GET",
      `/v1/audit?limit=3&after=${page.body.nextAfter}`,
    );
    expect(next.body.items[0].seq).toBe(page.body.nextAfter + 1);

    const verify = await s.call(s.tokens.admin, "GET", "/v1/audit/verify");
    expect(verify.status).toBe(200);
    expect(verify.body).toMatchObject({ ok: true });
    expect(verify.body.count).toBeGreaterThan(3);
  });
});

describe("clients that hang up", () => {
  it("answers 400 and logs at debug, not a 500 at error, when the body stops mid-way", async () => {
    const lines: { level: number; msg: string }[] = [];
    const logger = pino(
      { level: "debug" },
      { write: (l: string) => void lines.push(JSON.parse(l)) },
    );
    const t = await startTestServer({ logger });
    try {
      const { port } = new URL(t.url);
      for (const framing of ["content-length", "chunked"] as const) {
        const before = lines.length;
        await new Promise<void>((resolve) => {
          const socket = connect(Number(port), "127.0.0.1", () => {
            const head =
              framing === "chunked"
                ? 'Transfer-Encoding: chunked\r\n\r\n10\r\n{"title": "half'
                : 'Content-Length: 5000\r\n\r\n{"title": "half';
            socket.write(
              `POST /v1/requests HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${t.tokens.agent}\r\nContent-Type: application/json\r\n${head}`,
            );
            setTimeout(() => {
              socket.destroy();
              resolve();
            }, 100);
          });
          socket.on("error", () => {});
        });
        let seen = false;
        for (let i = 0; i < 100 && !seen; i++) {
          await new Promise((r) => setTimeout(r, 20));
          seen = lines.slice(before).some((l) => /answered 400/.test(l.msg));
        }
        expect(seen, framing).toBe(true);
        const mine = lines.slice(before);
        expect(
          mine.filter((l) => l.level >= 50),
          framing,
        ).toEqual([]);
        expect(mine.find((l) => /answered 400/.test(l.msg))?.level).toBe(20);
      }
      // Nothing was created from the half bodies.
      expect((await t.call(t.tokens.agent, "GET", "/v1/requests")).body.items).toEqual([]);
    } finally {
      await t.close();
    }
  });
});

describe("unexpected failures", () => {
  it("answers 500 without leaking the cause, and logs it", async () => {
    const lines: string[] = [];
    const logger = pino({ level: "info" }, { write: (l: string) => void lines.push(l) });
    const store = memoryStore();
    store.listRequests = async () => {
      throw new Error("disk /var/secret/airlock.db exploded");
    };
    const airlock = await createAirlock({ store, logger: pino({ level: "silent" }) });
    const tokens = memoryTokenStore();
    const { token } = await createToken(tokens, { name: "root", roles: ["admin"] });
    const server = createServer({ airlock, auth: { tokens }, logger });
    const { url } = await server.listen({ port: 0 });
    try {
      const r = await call(url, token, "GET", "/v1/requests");
      expect(r.status).toBe(500);
      expect(r.headers.get("content-type")).toBe("application/problem+json");
      expect(r.body).toMatchObject({ status: 500, code: "internal" });
      expect(r.text).not.toContain("secret");
      expect(r.text).not.toContain("exploded");
      expect(lines.join("")).toContain("exploded");
      expect(lines.join("")).not.toContain(token);
    } finally {
      await server.close();
      await airlock.close();
    }
  });
});
