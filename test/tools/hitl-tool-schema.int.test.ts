// hitlTool with the tool's own schema (issue 33, item 3), against a real server on loopback that was
// given no schema of its own (as `airlock serve`): the request carries the tool's JSON Schema, an
// edit of the wrong type is refused there with 422 and leaves the request pending, and the wrapped
// function gets the approved args parsed by the tool's zod schema, typed by it.
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { createClient } from "../../src/client/index.js";
import { isAirlockError } from "../../src/core/errors.js";
import { ARGS_SCHEMA_WARNING, toArgsSchema } from "../../src/tools/args-schema.js";
import { type HitlCall, hitlTool } from "../../src/tools/hitl-tool.js";
import type { HitlPending, HitlRejection } from "../../src/tools/results.js";
import { startTestServer, type TestServer } from "../server/helpers.js";

let s: TestServer;
beforeEach(async () => {
  s = await startTestServer();
});
afterEach(async () => {
  await s.close();
});

const payment = z.object({
  amountCents: z.number().int().positive(),
  payee: z.string(),
  currency: z.string().default("EUR"),
});

function payTool(schema: z.ZodType<z.output<typeof payment>, z.input<typeof payment>> = payment) {
  const ran: { args: z.output<typeof payment>; call: HitlCall }[] = [];
  const airlock = createClient({ url: s.url, token: s.tokens.agent });
  const tool = hitlTool(
    async (args, call) => {
      ran.push({ args, call });
      return `paid ${args.amountCents} ${args.currency} to ${args.payee}`;
    },
    { name: "pay", airlock, requester: "bot", autoThreshold: 100, quickThreshold: 100, schema },
  );
  return { tool, ran };
}

async function refusal(p: Promise<unknown>) {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected a refusal");
}

describe("hitlTool with a zod schema, through a server with no schema of its own", () => {
  it("types the tool by the schema: the call takes its input, the function gets its output", () => {
    const { tool } = payTool();
    expectTypeOf(tool).parameter(0).toMatchTypeOf<{ amountCents: number; payee: string }>();
    expectTypeOf(tool).parameter(0).toHaveProperty("currency").toEqualTypeOf<string | undefined>();
    hitlTool(
      (args) => {
        expectTypeOf(args).toEqualTypeOf<{
          amountCents: number;
          payee: string;
          currency: string;
        }>();
        return 1;
      },
      { name: "typed", schema: payment },
    );
    expectTypeOf(tool.resume).returns.resolves.toEqualTypeOf<
      string | HitlPending | HitlRejection
    >();
  });

  it("sends the tool's JSON Schema; a wrongly typed edit gets 422 and the approval is not spent", async () => {
    const { tool, ran } = payTool();
    const marker = (await tool({ amountCents: 480000, payee: "ACME" })) as HitlPending;
    const id = marker.hitl_result.approvalId ?? "";
    const request = await s.airlock.get(id);
    expect(request.argsSchema).toEqual(z.toJSONSchema(payment, { io: "input" }));
    const lots = await s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
      outcome: "approved",
      editedArgs: { amountCents: "lots", payee: "ACME" },
    });
    expect(lots.status).toBe(422);
    expect(lots.body.field).toBe("editedArgs.amountCents");
    expect(lots.body.detail).toContain('amountCents: expected a number, got the text "lots"');
    expect((await s.airlock.get(id)).status).toBe("pending");
    // The reviewer's client sees the same refusal.
    const reviewer = createClient({ url: s.url, token: s.tokens.alice });
    const err = await refusal(
      reviewer.decide(id, {
        outcome: "approved",
        reviewer: "alice",
        editedArgs: { amountCents: -5, payee: "ACME" },
      }),
    );
    expect(isAirlockError(err, "invalid_input")).toBe(true);
    expect(ran).toEqual([]);
    // A fitting edit: the function gets the parsed value, the default filled in.
    await reviewer.decide(id, {
      outcome: "approved",
      reviewer: "alice",
      editedArgs: { amountCents: 400000, payee: "ACME" },
    });
    expect(await tool.resume(id)).toBe("paid 400000 EUR to ACME");
    expect(ran.map((r) => r.args)).toEqual([
      { amountCents: 400000, payee: "ACME", currency: "EUR" },
    ]);
    expect(typeof ran[0]?.args.amountCents).toBe("number");
  });

  it("refuses a call whose own args do not fit, before any request is opened", async () => {
    const { tool, ran } = payTool();
    const err = await refusal(
      tool({ amountCents: "lots", payee: "ACME" } as unknown as {
        amountCents: number;
        payee: string;
      }),
    );
    expect(isAirlockError(err, "invalid_input")).toBe(true);
    expect((err as Error).message).toContain('amountCents: expected a number, got the text "lots"');
    expect((await s.airlock.list({})).items).toHaveLength(0);
    expect(ran).toEqual([]);
  });

  it("a check the JSON Schema cannot carry (a refinement) still stops the run, unclaimed", async () => {
    const whole = payment.refine((p) => p.amountCents % 100 === 0, {
      message: "whole euros only",
      path: ["amountCents"],
    });
    const { tool, ran } = payTool(whole);
    const id =
      ((await tool({ amountCents: 5000, payee: "ACME" })) as HitlPending).hitl_result.approvalId ??
      "";
    await createClient({ url: s.url, token: s.tokens.alice }).decide(id, {
      outcome: "approved",
      reviewer: "alice",
      editedArgs: { amountCents: 4999, payee: "ACME" },
    });
    const out = (await tool.resume(id)) as HitlRejection;
    expect(out).toMatchObject({ rejected: true, retry: false, code: "invalid_args" });
    expect(out.reason).toContain("amountCents: whole euros only");
    expect(ran).toEqual([]);
    // Not claimed: the log never says it ran, and the approval was not used up by a run.
    expect((await s.airlock.get(id)).execution).toBeUndefined();
  });

  it("a JSON Schema too large to carry is left out, with a warning that says why", async () => {
    const big = z.object(
      Object.fromEntries(
        Array.from({ length: 1500 }, (_, i) => [`field_${i}`, z.string().describe("x".repeat(40))]),
      ),
    );
    const out = toArgsSchema(big);
    expect(out).toMatchObject({ skipped: expect.stringContaining("over the 65536") });
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on("warning", onWarning);
    try {
      const tool = hitlTool(async () => "ok", {
        name: "huge",
        schema: big.partial(),
        airlock: createClient({ url: s.url, token: s.tokens.agent }),
        requester: "bot",
        autoThreshold: 100,
        quickThreshold: 100,
      });
      const marker = (await tool({})) as HitlPending;
      expect((await s.airlock.get(marker.hitl_result.approvalId ?? "")).argsSchema).toBeUndefined();
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings.map((w) => (w as Error & { code?: string }).code)).toContain(
      ARGS_SCHEMA_WARNING,
    );
    expect(warnings.find((w) => w.message.includes("huge"))?.message).toContain(
      "carry no argsSchema",
    );
  });
});
