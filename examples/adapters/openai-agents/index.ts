// An OpenAI Agents SDK agent whose `send_email` tool waits for a person through Airlock. Offline: the
// model is a fake (no network, no API key). Mail to the company's own domain passes by policy (and is
// recorded in the audit log); anything else opens a gate, and the run goes on once it is decided.
//
//   npx tsx examples/adapters/openai-agents/index.ts
//
// approves the gate after printing it (as a reviewer would in the inbox, the CLI or the API).
import { Agent, Runner, tool } from "@openai/agents";
import { z } from "zod";
import { airlockNeedsApproval, approveInterruptions } from "../../../src/adapters/openai-agents.js";
import { type Airlock, createAirlock, memoryStore, when } from "../../../src/index.js";
import { FakeModel } from "./fake-model.js";

export interface ExampleResult {
  finalOutput: string | undefined;
  sent: Array<{ to: string; body: string }>;
}

/** Builds the agent on `airlock`. `sent` collects what the tool really sent. */
export function mailAgent(
  airlock: Airlock,
  calls: Array<{ to: string; body: string }>,
  sent: Array<{ to: string; body: string }>,
) {
  const sendEmail = tool({
    name: "send_email",
    description: "Send an email",
    parameters: z.object({ to: z.string(), body: z.string() }),
    needsApproval: airlockNeedsApproval(airlock, {
      tool: "send_email",
      policy: when((input) => String(input.args.to).endsWith("@example.com"), {
        level: "auto",
        reason: "internal mail",
      }),
    }),
    execute: async ({ to, body }) => {
      sent.push({ to, body });
      return `sent to ${to}`;
    },
  });
  return new Agent({
    name: "mailer",
    instructions: "Send the emails you are asked to send.",
    tools: [sendEmail],
    model: new FakeModel({ tool: "send_email", calls }),
  });
}

/** Runs the agent; `review` decides each gate as a person would. */
export async function runExample(
  review: (airlock: Airlock, id: string) => Promise<void>,
  calls = [{ to: "partner@elsewhere.org", body: "Contract attached." }],
): Promise<ExampleResult> {
  const airlock = await createAirlock({ store: memoryStore() });
  try {
    const sent: Array<{ to: string; body: string }> = [];
    const agent = mailAgent(airlock, calls, sent);
    const runner = new Runner({ tracingDisabled: true });
    const first = await runner.run(agent, "Send the contract to our partner.");
    // Each gate is decided elsewhere (here: by `review`, as soon as it opens).
    const seen = new Set<string>();
    const stop = new AbortController();
    const reviewer = (async () => {
      for await (const e of airlock.events({ types: ["created"], after: 0, signal: stop.signal })) {
        if (e.requestId && !seen.has(e.requestId)) {
          seen.add(e.requestId);
          const r = await airlock.get(e.requestId);
          // A resume ticket (`openai-agents.resume`) is no gate: only its resumer settles it.
          if (r.status === "pending" && r.action !== "openai-agents.resume") {
            await review(airlock, r.id);
          }
        }
      }
    })();
    const result = await approveInterruptions(airlock, runner, agent, first, { timeoutMs: 60_000 });
    stop.abort();
    await reviewer;
    return { finalOutput: result.finalOutput, sent };
  } finally {
    await airlock.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = await runExample(async (airlock, id) => {
    const r = await airlock.get(id);
    console.log(`Gate ${r.id}: ${r.title}\n${r.preview ?? ""}\n→ approved by alice`);
    await airlock.decide(id, { outcome: "approved", reviewer: "alice" });
  });
  console.log(out.finalOutput);
}
