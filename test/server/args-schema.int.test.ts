// A request's own argsSchema: the args and every edit are checked against it by the server that
// takes the decision, with no schema registered in that process (as under `airlock serve`).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

const argsSchema = {
  type: "object",
  properties: {
    amountCents: { type: "integer", minimum: 1 },
    payee: { type: "string" },
  },
  required: ["amountCents", "payee"],
  additionalProperties: false,
};

describe("argsSchema", () => {
  it("refuses an edit of the wrong type with 422 naming the field in words a person reads", async () => {
    const created = await s.call(s.tokens.agent, "POST", "/v1/requests", {
      title: "Pay",
      args: { amountCents: 480000, payee: "ACME" },
      argsSchema,
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(created.body.argsSchema).toEqual(argsSchema);
    const lots = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "approved",
      editedArgs: { amountCents: "lots", payee: "ACME" },
    });
    expect(lots.status).toBe(422);
    expect(lots.headers.get("content-type")).toContain("application/problem+json");
    expect(lots.body.detail).toBe(
      'The edited arguments do not fit the tool\'s schema: amountCents: expected a number, got the text "lots"',
    );
    expect(lots.body.field).toBe("editedArgs.amountCents");
    const extra = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "approved",
      editedArgs: { amountCents: 400000, payee: "ACME", memo: "x" },
    });
    expect(extra.status).toBe(422);
    expect((await s.airlock.get(id)).status).toBe("pending");
    const ok = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "approved",
      editedArgs: { amountCents: 400000, payee: "ACME" },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.decision.editedArgs).toEqual({ amountCents: 400000, payee: "ACME" });
  });

  it("refuses a request whose own args do not fit, and a schema that is not one", async () => {
    const misfit = await s.call(s.tokens.agent, "POST", "/v1/requests", {
      title: "Pay",
      args: { amountCents: 0, payee: "ACME" },
      argsSchema,
    });
    expect(misfit.status).toBe(422);
    expect(misfit.body.detail).toMatch(/^The arguments do not fit the tool's schema: amountCents:/);
    const broken = await s.call(s.tokens.agent, "POST", "/v1/requests", {
      title: "Pay",
      args: {},
      argsSchema: { type: "no-such-type" },
    });
    expect(broken.status).toBe(422);
    expect(broken.body.field).toBe("argsSchema");
  });
});
