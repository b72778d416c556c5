// /v1/trust over real HTTP: suggestions after N approvals by people, accepting (admins only, and
// only a current suggestion), the next identical call approved naming the rule, revoking.
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAirlock } from "../../src/engine/engine.js";
import { argsShapeHash } from "../../src/policy/args-shape.js";
import { createLearnedTrust } from "../../src/policy/learned-trust.js";
import { openApiDocument } from "../../src/server/openapi.js";
import { type AirlockServer, createServer } from "../../src/server/server.js";
import { createToken, memoryTokenStore } from "../../src/server/tokens.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";
import { call, type Reply } from "./helpers.js";

const THRESHOLD = 3;
const deploy = (service: string, extra: Record<string, unknown> = {}) => ({
  title: `deploy ${service}`,
  action: "deploy",
  args: { service, replicas: 2, ...extra },
});

describe("/v1/trust", () => {
  const t = tempDir("airlock-trust-");
  let server: AirlockServer;
  let close: () => Promise<void>;
  let url: string;
  const tok = { agent: "", alice: "", admin: "" };
  const as = (token: string, method: string, path: string, body?: unknown): Promise<Reply> =>
    call(url, token, method, path, body);

  beforeAll(async () => {
    const store = sqliteStore(join(t.dir, "airlock.db"));
    const trust = createLearnedTrust({ store, threshold: THRESHOLD });
    const airlock = await createAirlock({
      store,
      policy: trust.policy,
      logger: pino({ level: "silent" }),
    });
    const tokens = memoryTokenStore();
    tok.agent = (await createToken(tokens, { name: "bot", roles: ["agent"] })).token;
    tok.alice = (await createToken(tokens, { name: "alice", roles: ["reviewer"] })).token;
    tok.admin = (await createToken(tokens, { name: "root", roles: ["admin"] })).token;
    server = createServer({ airlock, auth: { tokens }, rateLimit: false, trust });
    url = (await server.listen({ port: 0, host: "127.0.0.1" })).url;
    close = async () => {
      await server.close();
      await airlock.close();
      t.cleanup();
    };
  });
  afterAll(async () => {
    await close?.();
  });

  async function approved(service: string) {
    const r = await as(tok.agent, "POST", "/v1/requests", deploy(service));
    expect(r.status).toBe(201);
    const d = await as(tok.alice, "POST", `/v1/requests/${r.body.id}/decisions`, {
      outcome: "approved",
    });
    expect(d.status).toBe(200);
    return r.body.id as string;
  }

  it("suggests after N approvals, accepts only a current suggestion, applies and revokes the rule", async () => {
    const shapeHash = argsShapeHash(deploy("x").args);
    await approved("a");
    await approved("b");
    expect((await as(tok.admin, "GET", "/v1/trust/suggestions")).body).toEqual({
      threshold: THRESHOLD,
      items: [],
    });
    // Not suggested yet: refused, and the next call still waits for a person.
    const early = await as(tok.admin, "POST", "/v1/trust/rules", { action: "deploy", shapeHash });
    expect(early.status).toBe(409);
    expect(early.headers.get("content-type")).toContain("application/problem+json");
    expect(early.body.detail).toMatch(/not a current suggestion/);
    const waiting = await as(tok.agent, "POST", "/v1/requests", deploy("c"));
    expect(waiting.body.status).toBe("pending");
    await as(tok.alice, "POST", `/v1/requests/${waiting.body.id}/decisions`, {
      outcome: "approved",
    });
    const last = await approved("d");

    const suggestions = await as(tok.admin, "GET", "/v1/trust/suggestions");
    expect(suggestions.status).toBe(200);
    expect(suggestions.body.items).toHaveLength(1);
    expect(suggestions.body.items[0]).toMatchObject({
      action: "deploy",
      shape: '{"replicas":number,"service":string}',
      shapeHash,
      streak: 4,
    });
    expect(suggestions.body.items[0].examples[0]).toMatchObject({
      id: last,
      title: "deploy d",
      reviewer: "alice",
    });

    // Only admins see suggestions and accept them.
    expect((await as(tok.alice, "GET", "/v1/trust/suggestions")).status).toBe(403);
    expect((await as(tok.agent, "GET", "/v1/trust/suggestions")).status).toBe(403);
    const byReviewer = await as(tok.alice, "POST", "/v1/trust/rules", {
      action: "deploy",
      shapeHash,
    });
    expect(byReviewer.status).toBe(403);
    const byAgent = await as(tok.agent, "POST", "/v1/trust/rules", { action: "deploy", shapeHash });
    expect(byAgent.status).toBe(403);
    const other = await as(tok.admin, "POST", "/v1/trust/rules", {
      action: "deploy",
      shapeHash: "0".repeat(64),
    });
    expect(other.status).toBe(409);
    const bad = await as(tok.admin, "POST", "/v1/trust/rules", {
      action: "deploy",
      shapeHash: "x",
    });
    expect(bad.status).toBe(400);
    expect(bad.body.field).toBe("shapeHash");

    const accepted = await as(tok.admin, "POST", "/v1/trust/rules", {
      action: "deploy",
      shapeHash,
    });
    expect(accepted.status).toBe(201);
    const rule = accepted.body;
    expect(rule).toMatchObject({ action: "deploy", shapeHash, approvals: 4, createdBy: "root" });
    expect((await as(tok.admin, "GET", "/v1/trust/suggestions")).body.items).toEqual([]);
    expect((await as(tok.alice, "GET", "/v1/trust/rules")).body.items).toEqual([rule]);
    expect((await as(tok.agent, "GET", "/v1/trust/rules")).status).toBe(403);
    const again = await as(tok.admin, "POST", "/v1/trust/rules", { action: "deploy", shapeHash });
    expect(again.status).toBe(409);

    // A service people approved: within the rule's learned values.
    const auto = await as(tok.agent, "POST", "/v1/requests", deploy("d"));
    expect(auto.body.status).toBe("approved");
    expect(auto.body.decision).toMatchObject({ method: "auto", reviewer: "policy" });
    expect(auto.body.decision.comment).toBe(`learned trust rule ${rule.id} (deploy, 4 approvals)`);
    const wider = await as(tok.agent, "POST", "/v1/requests", deploy("f", { force: true }));
    expect(wider.body.status).toBe("pending");

    expect((await as(tok.alice, "DELETE", `/v1/trust/rules/${rule.id}`)).status).toBe(403);
    const revoked = await as(tok.admin, "DELETE", `/v1/trust/rules/${rule.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: rule.id, revokedBy: "root" });
    expect((await as(tok.admin, "DELETE", `/v1/trust/rules/${rule.id}`)).status).toBe(409);
    expect((await as(tok.admin, "DELETE", "/v1/trust/rules/trust_missing")).status).toBe(404);
    expect((await as(tok.alice, "GET", "/v1/trust/rules")).body.items).toEqual([]);
    const all = await as(tok.alice, "GET", "/v1/trust/rules?includeRevoked=true");
    expect(all.body.items).toEqual([revoked.body]);
    const after = await as(tok.agent, "POST", "/v1/requests", deploy("d"));
    expect(after.body.status).toBe("pending");

    const audit = await as(tok.admin, "GET", "/v1/audit");
    const kinds = audit.body.items
      .filter((e: { requestId?: string }) => e.requestId === undefined)
      .map((e: { actor: string; data: { kind: string; ruleId: string } }) => [
        e.actor,
        e.data.kind,
        e.data.ruleId,
      ]);
    expect(kinds).toEqual([
      ["root", "trust_rule_accepted", rule.id],
      ["root", "trust_rule_revoked", rule.id],
    ]);
  });

  it("is described in /openapi.json", () => {
    const doc = openApiDocument() as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(doc.paths["/v1/trust/rules"] ?? {}).sort()).toEqual(["get", "post"]);
    expect(doc.paths["/v1/trust/rules/{id}"]?.delete).toBeDefined();
    expect(doc.paths["/v1/trust/suggestions"]?.get).toBeDefined();
  });
});
