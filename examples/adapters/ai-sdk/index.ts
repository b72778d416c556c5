// A refund desk on the Vercel AI SDK (`ai` 7) with Airlock as its approval layer, offline: the model
// is scripted (fake-model.ts), the store is in memory. The assistant looks an order up (ungated) and
// proposes a refund; Airlock opens a request for it (tool name, args, preview) and ends the turn; a
// reviewer decides in Airlock (here: in code; in real life the inbox, the CLI, the API or Slack); the
// server turns the decision into the SDK's `tool-approval-response` and the conversation goes on,
// the refund running exactly once.
//
//   node --import tsx examples/adapters/ai-sdk/index.ts
import { pathToFileURL } from "node:url";
import { generateText, type ModelMessage, tool } from "ai";
import { z } from "zod";
import { airlockToolApproval } from "../../../src/adapters/ai-sdk.js";
import {
  type AirlockApi,
  type ApprovalRequest,
  createAirlock,
  type DecisionInput,
} from "../../../src/index.js";
import { sqliteStore } from "../../../src/store/sqlite-entry.js";
import { scriptedModel } from "./fake-model.js";

export interface Refund {
  orderId: string;
  amountCents: number;
}

/** The desk's tools: `lookupOrder` reads (not gated), `issueRefund` moves money (gated). */
export function refundTools(ledger: Refund[]) {
  return {
    lookupOrder: tool({
      description: "Look an order up",
      inputSchema: z.object({ orderId: z.string() }),
      execute: async ({ orderId }) => ({ orderId, totalCents: 12_000, customer: "Ada" }),
    }),
    issueRefund: tool({
      description: "Refund (part of) an order",
      inputSchema: z.object({ orderId: z.string(), amountCents: z.number().int().positive() }),
      execute: async ({ orderId, amountCents }) => {
        ledger.push({ orderId, amountCents });
        return { refunded: amountCents, orderId };
      },
    }),
  };
}

export interface RefundChatOptions {
  airlock: AirlockApi;
  conversationId?: string;
  /** The reviewer's decision for the gate (called once the request is open). */
  review: (request: ApprovalRequest) => DecisionInput;
  log?: (line: string) => void;
}

export interface RefundChatResult {
  text: string;
  ledger: Refund[];
  request: ApprovalRequest;
  messages: ModelMessage[];
}

export async function runRefundChat(options: RefundChatOptions): Promise<RefundChatResult> {
  const { airlock } = options;
  const log = options.log ?? (() => undefined);
  const ledger: Refund[] = [];
  const tools = refundTools(ledger);
  const model = scriptedModel(() => [
    { toolName: "issueRefund", input: { orderId: "A-42", amountCents: 12_000 } },
  ]);
  const gate = airlockToolApproval({
    airlock,
    conversationId: options.conversationId ?? "chat-refund-1",
    tools,
    // Who asks, on each request and as who ran the refund (leave it out with createClient():
    // the server names the token).
    requester: "refund-desk",
    gates: {
      lookupOrder: false,
      issueRefund: {
        title: (input) =>
          `Refund ${(input.amountCents / 100).toFixed(2)} on order ${input.orderId}`,
        preview: (input) =>
          `Refund **${input.amountCents / 100} USD** on order \`${input.orderId}\``,
        risk: "high",
      },
    },
  });
  const call = (messages: ModelMessage[]) =>
    generateText({ model, tools: gate.tools, toolApproval: gate.toolApproval, messages });

  // Turn 1: the model proposes a refund; Airlock opens a gate and the turn ends.
  const messages: ModelMessage[] = [{ role: "user", content: "Please refund order A-42 in full." }];
  log(`user: ${messages[0]?.content}`);
  const first = await call(messages);
  messages.push(...first.response.messages);
  const asked = await gate.responses(messages);
  const request = asked.pending[0];
  if (!request) throw new Error("the refund should wait for a reviewer");
  log(`airlock: request ${request.id} "${request.title}" is ${request.status}`);

  // A reviewer decides in Airlock (any channel, any process).
  const decision = options.review(request);
  await airlock.decide(request.id, decision);
  log(
    `reviewer ${decision.reviewer}: ${decision.outcome}${decision.comment ? ` (${decision.comment})` : ""}`,
  );

  // The server turns the decision into the SDK's answer and the conversation goes on.
  const answered = await gate.responses(messages, { wait: true });
  if (!answered.message) throw new Error("the decision should answer the approval");
  messages.push(answered.message);
  const second = await call(messages);
  messages.push(...second.response.messages);
  log(`assistant: ${second.text}`);
  return { text: second.text, ledger, request: await airlock.get(request.id), messages };
}

async function main() {
  const airlock = await createAirlock({ store: sqliteStore(":memory:") });
  try {
    const result = await runRefundChat({
      airlock,
      review: () => ({ outcome: "approved", reviewer: "dana", comment: "customer is right" }),
      log: (line) => console.log(line),
    });
    console.log(`ledger: ${JSON.stringify(result.ledger)}`);
  } finally {
    await airlock.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  });
}
