// The tool's parameters through airlock/openai-agents (issue 33, item 3), against a real server on
// loopback given no schema (as `airlock serve`), an agent token for the run and a reviewer token for
// the decisions. Each gate carries its function tool's `parameters` as `argsSchema`: an edit of
// `amountCents` to "lots" is refused with 422 and the gate stays pending (the tool does not run, the
// approval is not used up), and a fitting edit runs once. A gate opened without the schema (an older
// adapter) and decided with a bad edit is refused before its execution is claimed.
import { Agent, Runner, tool } from "@openai/agents";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { FakeModel } from "../../../examples/adapters/openai-agents/fake-model.js";
import {
  airlockNeedsApproval,
  parkInterruptions,
  resumeRun,
} from "../../../src/adapters/openai-agents.js";
import { type AirlockApi, createClient, type RequestInput } from "../../../src/index.js";
import { startTestServer, type TestServer } from "../../server/helpers.js";

let s: TestServer;
beforeEach(async () => {
  s = await startTestServer();
});
afterEach(async () => {
  await s.close();
});

function payer(airlock: AirlockApi) {
  const paid: unknown[] = [];
  const pay = tool({
    name: "pay",
    description: "Pay a supplier",
    parameters: z.object({ amountCents: z.number().int().positive(), payee: z.string() }),
    needsApproval: airlockNeedsApproval(airlock, { tool: "pay" }),
    execute: async (args) => {
      paid.push(args);
      return `paid ${args.amountCents} cents to ${args.payee}`;
    },
  });
  const agent = new Agent({
    name: "payer",
    instructions: "Pay.",
    tools: [pay],
    model: new FakeModel({ tool: "pay", calls: [{ amountCents: 480000, payee: "ACME" }] }),
  });
  return { agent, pay, paid, runner: new Runner({ tracingDisabled: true }) };
}

async function editTo(id: string, editedArgs: Record<string, unknown>) {
  return s.call(s.tokens.alice, "POST", `/v1/requests/${id}/decisions`, {
    outcome: "approved",
    editedArgs,
  });
}

describe("airlock/openai-agents: the tool's parameters, on a server with no schema of its own", () => {
  it("a wrongly typed edit gets 422 and runs nothing; a fitting edit runs once", async () => {
    const airlock = createClient({ url: s.url, token: s.tokens.agent, pollMs: 50 });
    const { agent, pay, paid, runner } = payer(airlock);
    const first = await runner.run(agent, "Pay ACME.");
    const { requests } = await parkInterruptions(airlock, first);
    const id = requests[0]?.id as string;
    expect((await s.airlock.get(id)).argsSchema).toEqual(pay.parameters);

    const lots = await editTo(id, { amountCents: "lots", payee: "ACME" });
    expect(lots.status).toBe(422);
    expect(lots.body.field).toBe("editedArgs.amountCents");
    expect(lots.body.detail).toContain('amountCents: expected a number, got the text "lots"');
    expect((await s.airlock.get(id)).status).toBe("pending");
    expect((await resumeRun(airlock, runner, agent, id)).status).toBe("pending");
    expect(paid).toEqual([]);

    expect((await editTo(id, { amountCents: 400000, payee: "ACME" })).status).toBe(200);
    const out = await resumeRun(airlock, runner, agent, id);
    if (out.status !== "resumed") throw new Error(`not resumed: ${out.status}`);
    expect(paid).toEqual([{ amountCents: 400000, payee: "ACME" }]);
    expect(String(out.result.finalOutput)).toContain("paid 400000 cents to ACME");
    expect((await s.airlock.get(id)).execution?.state).toBe("executed");
  });

  it("a gate opened without argsSchema and approved with a bad edit: refused before the claim", async () => {
    const client = createClient({ url: s.url, token: s.tokens.agent, pollMs: 50 });
    // An adapter of an earlier version: its requests carried no schema.
    const older: AirlockApi = Object.assign(Object.create(client) as AirlockApi, {
      request: (input: RequestInput) => {
        const { argsSchema: _left, ...rest } = input;
        return client.request(rest);
      },
    });
    const { agent, paid, runner } = payer(older);
    const { requests } = await parkInterruptions(older, await runner.run(agent, "Pay ACME."));
    const id = requests[0]?.id as string;
    expect((await s.airlock.get(id)).argsSchema).toBeUndefined();
    expect((await editTo(id, { amountCents: "lots", payee: "ACME" })).status).toBe(200);
    const out = await resumeRun(older, runner, agent, id);
    if (out.status !== "resumed") throw new Error(`not resumed: ${out.status}`);
    expect(paid).toEqual([]);
    expect(String(out.result.finalOutput)).toContain(
      "do not fit the tool's parameters (amountCents: expected a number, got the text",
    );
    // Nothing was claimed: the log never says the call ran or failed.
    expect((await s.airlock.get(id)).execution).toBeUndefined();
  });
});
