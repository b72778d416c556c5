// The tool's inputSchema through airlock/ai-sdk (issue 33, item 3), against a real server on
// loopback given no schema (as `airlock serve`), an agent token for the conversation and a reviewer
// token for the decisions. Each gate carries the tool's JSON Schema (zod or `jsonSchema()`), so an
// edit of `amountCents` to "lots" is refused with 422 and the gate stays pending (the tool does not
// run, the approval is not used up); a fitting edit runs once, parsed by the tool's schema.
import {
  generateText,
  type JSONSchema7,
  jsonSchema,
  type ModelMessage,
  stepCountIs,
  type ToolSet,
  tool,
} from "ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { scriptedModel } from "../../../examples/adapters/ai-sdk/fake-model.js";
import { type AirlockToolApproval, airlockToolApproval } from "../../../src/adapters/ai-sdk.js";
import { createClient } from "../../../src/index.js";
import { startTestServer, type TestServer } from "../../server/helpers.js";

let s: TestServer;
beforeEach(async () => {
  s = await startTestServer();
});
afterEach(async () => {
  await s.close();
});

async function editTo(id: string, editedArgs: Record<string, unknown>) {
  return s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
    outcome: "approved",
    editedArgs,
  });
}

async function parked<T extends ToolSet>(tools: T, conversationId: string) {
  const agent = createClient({ url: s.url, token: s.tokens.agent, pollMs: 50 });
  const gate: AirlockToolApproval<T> = airlockToolApproval({
    airlock: agent,
    conversationId,
    tools,
  });
  const model = scriptedModel(() => [
    { toolName: "pay", input: { amountCents: 480000, payee: "ACME" } },
  ]);
  const messages: ModelMessage[] = [{ role: "user", content: "pay ACME" }];
  const call = () =>
    generateText({
      model,
      tools: gate.tools,
      toolApproval: gate.toolApproval,
      stopWhen: stepCountIs(3),
      messages: [...messages],
    });
  messages.push(...(await call()).response.messages);
  const [request] = (await gate.responses(messages)).pending;
  if (!request) throw new Error("nothing pending");
  return { gate, messages, call, request };
}

describe("airlock/ai-sdk: the tool's inputSchema, on a server with no schema of its own", () => {
  it("zod inputSchema: a wrongly typed edit gets 422 and runs nothing; a fitting edit runs parsed", async () => {
    const paid: Array<{ amountCents: number; payee: string; currency: string }> = [];
    const tools = {
      pay: tool({
        description: "Pay a supplier",
        inputSchema: z.object({
          amountCents: z.number().int().positive(),
          payee: z.string(),
          currency: z.string().default("EUR"),
        }),
        execute: async (args) => {
          paid.push(args);
          return `paid ${args.amountCents} ${args.currency} cents to ${args.payee}`;
        },
      }),
    };
    const { gate, messages, call, request } = await parked(tools, "conv-zod");
    const stored = await s.airlock.get(request.id);
    expect(stored.argsSchema).toMatchObject({
      type: "object",
      properties: { amountCents: { type: "integer" }, payee: { type: "string" } },
      required: ["amountCents", "payee"],
    });

    const lots = await editTo(request.id, { amountCents: "lots", payee: "ACME" });
    expect(lots.status).toBe(422);
    expect(lots.body.field).toBe("editedArgs.amountCents");
    expect(lots.body.detail).toContain('amountCents: expected a number, got the text "lots"');
    expect((await s.airlock.get(request.id)).status).toBe("pending");
    expect((await gate.responses(messages)).pending.map((r) => r.id)).toEqual([request.id]);
    expect(paid).toEqual([]);

    expect((await editTo(request.id, { amountCents: 400000, payee: "ACME" })).status).toBe(200);
    const { message } = await gate.responses(messages, { wait: true });
    if (!message) throw new Error("not answered");
    messages.push(message);
    expect((await call()).text).toContain("paid 400000 EUR cents to ACME");
    // The edit came back through the tool's schema: the default is filled in, the types its own.
    expect(paid).toEqual([{ amountCents: 400000, payee: "ACME", currency: "EUR" }]);
    expect((await s.airlock.get(request.id)).execution?.state).toBe("executed");
  });

  it("a check the JSON Schema cannot carry (a refinement): the edit is denied before anything is claimed", async () => {
    const paid: unknown[] = [];
    const tools = {
      pay: tool({
        description: "Pay a supplier",
        inputSchema: z
          .object({ amountCents: z.number().int().positive(), payee: z.string() })
          .refine((p) => p.amountCents % 100 === 0, {
            message: "whole euros only",
            path: ["amountCents"],
          }),
        execute: async (args) => {
          paid.push(args);
          return "paid";
        },
      }),
    };
    const { gate, messages, call, request } = await parked(tools, "conv-refine");
    expect((await editTo(request.id, { amountCents: 4999, payee: "ACME" })).status).toBe(200);
    const { message } = await gate.responses(messages, { wait: true });
    if (!message) throw new Error("not answered");
    messages.push(message);
    expect((await call()).text).toContain("do not fit the tool's input schema");
    expect(paid).toEqual([]);
    expect((await s.airlock.get(request.id)).execution).toBeUndefined();
  });

  it("jsonSchema() inputSchema: carried as it is, and a wrongly typed edit gets 422", async () => {
    const schema = {
      type: "object",
      properties: { amountCents: { type: "integer", minimum: 1 }, payee: { type: "string" } },
      required: ["amountCents", "payee"],
      additionalProperties: false,
    } satisfies JSONSchema7;
    const paid: unknown[] = [];
    const tools = {
      pay: tool({
        description: "Pay a supplier",
        inputSchema: jsonSchema<{ amountCents: number; payee: string }>(schema),
        execute: async (args) => {
          paid.push(args);
          return "paid";
        },
      }),
    };
    const { request } = await parked(tools, "conv-json");
    expect((await s.airlock.get(request.id)).argsSchema).toEqual(schema);
    const lots = await editTo(request.id, { amountCents: "lots", payee: "ACME" });
    expect(lots.status).toBe(422);
    expect(lots.body.detail).toContain('amountCents: expected a number, got the text "lots"');
    const extra = await editTo(request.id, { amountCents: 5, payee: "ACME", memo: "x" });
    expect(extra.status).toBe(422);
    expect(extra.body.detail).toContain("unexpected field memo");
    expect((await s.airlock.get(request.id)).status).toBe("pending");
    expect(paid).toEqual([]);
  });
});
