// /v1/requests/:id/execution: the requester claims an approved request under a lease, reports the
// outcome after it ran, and a person who may decide settles an execution not known to have run.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/client/index.js";
import { runApproved } from "../../src/engine/run-approved.js";
import { startTestServer, type TestServer } from "./helpers.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

async function approved(title: string): Promise<string> {
  const created = await s.call(s.tokens.agent, "POST", "/v1/requests", { title });
  const id = created.body.id as string;
  await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, { outcome: "approved" });
  return id;
}

describe("claiming and reporting an execution over HTTP", () => {
  it("the requester claims once; the second claim is a 409; others may not claim", async () => {
    const created = await s.call(s.tokens.agent, "POST", "/v1/requests", { title: "ship it" });
    const id = created.body.id as string;
    const early = await s.call(s.tokens.agent, "POST", `/v1/requests/${id}/execution`);
    expect(early.status).toBe(409);
    expect(early.headers.get("content-type")).toContain("application/problem+json");
    await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, { outcome: "approved" });

    const reviewer = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/execution`);
    expect(reviewer.status).toBe(403);
    const stranger = await s.call(s.tokens.agent2, "POST", `/v1/requests/${id}/execution`);
    expect(stranger.status).toBe(404);

    const first = await s.call(s.tokens.agent, "POST", `/v1/requests/${id}/execution`);
    expect(first.status).toBe(200);
    expect(first.body.execution).toMatchObject({ state: "claimed", attempt: 1, claimedBy: "bot" });
    expect(first.body.executedAt).toBeUndefined();
    const second = await s.call(s.tokens.agent, "POST", `/v1/requests/${id}/execution`);
    expect(second.status).toBe(409);
    expect(second.body.detail).toMatch(/was claimed for execution by bot/);

    const done = await s.call(s.tokens.agent, "POST", `/v1/requests/${id}/execution/outcome`, {
      attempt: 1,
      ok: true,
      resultDigest: "a".repeat(64),
    });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ executedBy: "bot", execution: { state: "executed" } });
    const again = await s.call(s.tokens.agent, "POST", `/v1/requests/${id}/execution/outcome`, {
      attempt: 1,
      ok: false,
      error: "late",
    });
    expect(again.status).toBe(409);
    const types = (await s.airlock.audit({ requestId: id })).map((e) => e.type);
    expect(types.slice(-2)).toEqual(["claimed", "executed"]);
  });

  it("refuses a malformed outcome or lease with a problem that names the field", async () => {
    const id = await approved("bad bodies");
    const lease = await s.call(s.tokens.agent, "POST", `/v1/requests/${id}/execution`, {
      leaseMs: -5,
    });
    expect(lease.status).toBe(400);
    expect(lease.body.detail).toMatch(/leaseMs/);
    await s.call(s.tokens.agent, "POST", `/v1/requests/${id}/execution`);
    const outcome = await s.call(s.tokens.agent, "POST", `/v1/requests/${id}/execution/outcome`, {
      attempt: 1,
      ok: true,
      resultDigest: "not a digest",
    });
    expect(outcome.status).toBe(400);
    expect(outcome.body.detail).toMatch(/resultDigest/);
    const wrong = await s.call(s.tokens.agent, "POST", `/v1/requests/${id}/execution/outcome`, {
      attempt: 2,
      ok: true,
    });
    expect(wrong.status).toBe(409);
    expect(wrong.body.detail).toMatch(/attempt 1, not 2/);
  });

  it("runApproved through the client: claim, run, report; a second run is already_executed", async () => {
    const client = createClient({ url: s.url, token: s.tokens.agent });
    const r = await client.request({ title: "client claim" });
    await s.call(s.tokens.alice, "POST", `/v1/requests/${r.id}/decisions`, { outcome: "approved" });
    let runs = 0;
    const first = await runApproved(client, r.id, () => ({ ran: ++runs }));
    expect(first).toMatchObject({ ok: true, recorded: true, value: { ran: 1 } });
    if (!first.ok) throw new Error("expected a run");
    expect(first.request.execution).toMatchObject({ state: "executed" });
    expect(first.request.execution?.resultDigest).toMatch(/^[0-9a-f]{64}$/);
    const second = await runApproved(client, r.id, () => ({ ran: ++runs }));
    expect(second).toMatchObject({ ok: false, reason: "already_executed" });
    expect(runs).toBe(1);
    await expect(client.claimExecution(r.id)).rejects.toMatchObject({ code: "conflict" });
  });
});

describe("an execution not known to have run", () => {
  it("is listed and settled by an approver, never by the agent; retry lets it run again", async () => {
    const created = await s.call(s.tokens.agent, "POST", "/v1/requests", {
      title: "lost in a crash",
      approvers: ["ops"],
    });
    const id = created.body.id as string;
    await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, { outcome: "approved" });
    await s.call(s.tokens.agent, "POST", `/v1/requests/${id}/execution`, { leaseMs: 1 });
    await new Promise((r) => setTimeout(r, 5));
    await s.airlock.sweep();
    const unknown = await s.call(s.tokens.admin, "GET", "/v1/requests?execution=unknown");
    expect(unknown.body.items.map((r: { id: string }) => r.id)).toContain(id);
    const summaries = await s.call(
      s.tokens.admin,
      "GET",
      "/v1/requests?execution=unknown&view=summary",
    );
    expect(summaries.body.items.find((r: { id: string }) => r.id === id)?.execution).toBe(
      "unknown",
    );
    const types = (await s.airlock.audit({ requestId: id })).map((e) => e.type);
    expect(types.slice(-2)).toEqual(["claimed", "execution_unknown"]);

    // The agent's own claim again: refused, a person must settle it.
    const claim = await s.call(s.tokens.agent, "POST", `/v1/requests/${id}/execution`);
    expect(claim.status).toBe(409);
    expect(claim.body.detail).toMatch(/not known to have run/);
    const path = `/v1/requests/${id}/execution/resolution`;
    expect((await s.call(s.tokens.agent, "POST", path, { resolution: "done" })).status).toBe(403);
    expect((await s.call(s.tokens.dual, "POST", path, { resolution: "done" })).status).toBe(403);
    // A reviewer who may not decide it does not see it either.
    expect((await s.call(s.tokens.bob, "POST", path, { resolution: "retry" })).status).toBe(404);
    const bad = await s.call(s.tokens.alice, "POST", path, { resolution: "maybe" });
    expect(bad.status).toBe(400);
    const retry = await s.call(s.tokens.alice, "POST", path, {
      resolution: "retry",
      comment: "the payment never left",
    });
    expect(retry.status).toBe(200);
    expect(retry.body.execution).toMatchObject({ state: "released", resolvedBy: "alice" });
    const second = await s.call(s.tokens.agent, "POST", `/v1/requests/${id}/execution`);
    expect(second.status).toBe(200);
    expect(second.body.execution).toMatchObject({ state: "claimed", attempt: 2 });
    const resolved = (await s.airlock.audit({ requestId: id })).find(
      (e) => e.type === "execution_resolved",
    );
    expect(resolved).toMatchObject({
      actor: "alice",
      data: { resolution: "retry", was: "unknown" },
    });
  });
});

describe("the inbox shows what became of an approval, and settles an unknown one", () => {
  async function session(token: string): Promise<{ cookie: string }> {
    const form = await fetch(`${s.url}/login`);
    const html = await form.text();
    const loginCookie = (form.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
    const res = await fetch(`${s.url}/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: loginCookie },
      body: new URLSearchParams({ token, next: "/", _csrf: csrf }).toString(),
      redirect: "manual",
    });
    return { cookie: (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "" };
  }

  it("names the state on the request page; the form settles it as the signed-in approver", async () => {
    const created = await s.call(s.tokens.agent, "POST", "/v1/requests", {
      title: "inbox unknown",
      approvers: ["ops"],
    });
    const id = created.body.id as string;
    await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, { outcome: "approved" });
    await s.call(s.tokens.agent, "POST", `/v1/requests/${id}/execution`, { leaseMs: 1 });
    await new Promise((r) => setTimeout(r, 5));
    await s.airlock.sweep();

    const { cookie } = await session(s.tokens.alice);
    const page = await (await fetch(`${s.url}/requests/${id}`, { headers: { cookie } })).text();
    expect(page).toContain('data-execution="unknown"');
    expect(page).toContain("Approved, not known to have run.");
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? "";
    const post = (resolution: string) =>
      fetch(`${s.url}/requests/${id}/execution`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          cookie,
          origin: s.url,
        },
        body: new URLSearchParams({ _csrf: csrf, resolution, comment: "bank shows it" }).toString(),
        redirect: "manual",
      });
    expect((await post("maybe")).status).toBe(422);
    const done = await post("done");
    expect(done.status).toBe(303);
    const after = await s.airlock.get(id);
    expect(after.execution).toMatchObject({ state: "executed", resolvedBy: "alice" });
    const again = await (await fetch(`${s.url}/requests/${id}`, { headers: { cookie } })).text();
    expect(again).toContain('data-execution="executed"');
    expect(again).toContain("Marked done by alice");
  });
});
