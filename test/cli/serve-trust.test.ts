// `airlock serve --trust-threshold N`: the server suggests a learned trust rule after N approvals by
// people, an admin accepts it, and the next identical call is approved naming the rule.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startServe } from "../../src/cli/serve.js";
import { trustThresholdFlag } from "../../src/cli/trust-threshold.js";
import { tempDir } from "../helpers.js";
import { call } from "../server/helpers.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("airlock serve --trust-threshold", () => {
  it("reads a whole number from 0 up, and refuses anything else naming the flag", () => {
    expect(trustThresholdFlag("0")).toBe(0);
    expect(trustThresholdFlag("20")).toBe(20);
    for (const bad of ["-1", "1.5", "x", "", "1e3"]) {
      expect(() => trustThresholdFlag(bad)).toThrow(/--trust-threshold expects a whole number/);
    }
  });

  it("suggests after N approvals; an accepted rule approves the next identical call", async () => {
    const t = tempDir("airlock-serve-trust-");
    cleanups.push(t.cleanup);
    const admin = "admin-token-0123456789";
    const serving = await startServe({
      db: join(t.dir, "airlock.db"),
      port: 0,
      env: { AIRLOCK_ADMIN_TOKEN: admin },
      print: () => {},
      trustThreshold: 2,
    });
    cleanups.push(() => serving.close());
    const url = serving.url;
    const token = async (name: string, role: string) =>
      (await call(url, admin, "POST", "/v1/tokens", { name, roles: [role] })).body.token as string;
    const agent = await token("bot", "agent");
    const alice = await token("alice", "reviewer");
    const ask = async () =>
      (
        await call(url, agent, "POST", "/v1/requests", {
          title: "rotate logs",
          action: "logs.rotate",
          args: { host: "web-1" },
        })
      ).body;
    for (let i = 0; i < 2; i++) {
      const r = await ask();
      expect(r.status).toBe("pending");
      await call(url, alice, "POST", `/v1/requests/${r.id}/decisions`, { outcome: "approved" });
    }
    const suggestions = await call(url, admin, "GET", "/v1/trust/suggestions");
    expect(suggestions.body.threshold).toBe(2);
    expect(suggestions.body.items).toHaveLength(1);
    const { action, shapeHash } = suggestions.body.items[0];
    const accepted = await call(url, admin, "POST", "/v1/trust/rules", { action, shapeHash });
    expect(accepted.status).toBe(201);
    const next = await ask();
    expect(next.status).toBe("approved");
    expect(next.decision.comment).toContain(accepted.body.id);
  });
});
