// A tiny chat app with inline approvals (pattern 3 routed by confidence):
//   - the Airlock server (API, inbox, the card's script) on one port;
//   - the chat app on another port, another origin: a plain page, and a backend that holds the agent's
//     API token, runs the agent's HITL tools through Airlock, and mints embed tokens for its user
//     with its own app token (never the agent's).
// A `quick` call (a small expense) is approved inline, in the chat, through <airlock-approval>; a
// `full` one (a large contract) goes to the review queue of the inbox. Either way the backend waits
// for the decision and resumes the tool, which runs once on approval.
import { createServer as createHttpServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import pino from "pino";
import { createClient } from "../../src/client/index.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { type AirlockServer, createServer } from "../../src/server/server.js";
import { createToken, memoryTokenStore } from "../../src/server/tokens.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { createExampleTools } from "../../src/tools/examples.js";
import { isHitlPending } from "../../src/tools/results.js";
import { chatPage } from "./page.js";

/** The chat's signed-in user, who approves quick calls inline. */
export const CHAT_USER = "dana";

export interface ChatExampleOptions {
  /** Where the SQLite database lives (a folder). */
  dir: string;
  /** @default 127.0.0.1 */
  host?: string;
  /** @default 0 (any free port) */
  airlockPort?: number;
  /** @default 0 (any free port) */
  chatPort?: number;
}

export interface ChatExample {
  chatUrl: string;
  airlockUrl: string;
  /** A reviewer token (rita, group finance) to sign in to the inbox and decide full approvals. */
  inboxToken: string;
  airlock: Airlock;
  close(): Promise<void>;
}

/** What the page asks for: one of the two scripted agent calls. */
const CALLS = {
  expense: {
    say: "Pay the team lunch (expense EXP-310, 240)",
    run: (tools: Tools) =>
      tools.approveExpense({
        expenseId: "EXP-310",
        amount: 240,
        _hitlContext: { userId: CHAT_USER, userRole: "member", workspaceVerified: true },
      }),
  },
  contract: {
    say: "Sign contract C-2025-044 (12,000)",
    run: (tools: Tools) =>
      tools.signContract({
        contractId: "C-2025-044",
        amount: 12_000,
        _hitlContext: { userId: CHAT_USER, userRole: "admin" },
      }),
  },
} as const;

type Tools = ReturnType<typeof createExampleTools>;

export async function startChatExample(options: ChatExampleOptions): Promise<ChatExample> {
  const host = options.host ?? "127.0.0.1";
  const logger = pino({ level: "silent" });
  const airlock = await createAirlock({
    store: sqliteStore(join(options.dir, "chat-example.db")),
    logger,
  });
  const tokens = memoryTokenStore();
  const agentToken = (await createToken(tokens, { name: "chat-agent", roles: ["agent"] })).token;
  // The chat app's backend mints approval cards with a token of its own (role app): never with the
  // agent's, since nothing an agent holds may decide, nor mint what decides.
  const appToken = (await createToken(tokens, { name: "chat-backend", roles: ["app"] })).token;
  // The chat user is a reviewer the server knows (the token itself is never used): only then may the
  // backend mint cards for them, and their cards die with their last reviewer token.
  await createToken(tokens, { name: CHAT_USER, roles: ["reviewer"] });
  const inboxToken = (
    await createToken(tokens, { name: "rita", roles: ["reviewer"], groups: ["finance"] })
  ).token;

  // The chat app's origin must be known to the Airlock server (CORS), so it listens first.
  let server: AirlockServer | undefined;
  let airlockUrl = "";
  const chat = createHttpServer((req, res) => {
    handle(req)
      .then(({ status, type, body }) =>
        res.writeHead(status, { "content-type": type, "cache-control": "no-store" }).end(body),
      )
      .catch((err: unknown) =>
        res
          .writeHead(500, { "content-type": "application/json" })
          .end(JSON.stringify({ error: err instanceof Error ? err.message : String(err) })),
      );
  });
  await listen(chat, options.chatPort ?? 0, host);
  const chatUrl = `http://${host}:${(chat.address() as AddressInfo).port}`;

  server = createServer({ airlock, auth: { tokens }, logger, embedOrigins: [chatUrl] });
  airlockUrl = (await server.listen({ port: options.airlockPort ?? 0, host })).url;

  const agent = createClient({ url: airlockUrl, token: agentToken });
  const tools = createExampleTools({
    airlock: agent,
    requester: "chat-agent",
    // The chat user may decide inline; the finance group reviews in the inbox.
    approvers: [CHAT_USER, "finance"],
    timeoutMs: 15 * 60_000,
  });

  async function handle(
    req: IncomingMessage,
  ): Promise<{ status: number; type: string; body: string }> {
    const url = new URL(req.url ?? "/", chatUrl);
    const json = (status: number, value: unknown) => ({
      status,
      type: "application/json",
      body: JSON.stringify(value),
    });
    if (req.method === "GET" && url.pathname === "/") {
      return { status: 200, type: "text/html; charset=utf-8", body: chatPage(airlockUrl) };
    }
    if (req.method === "POST" && url.pathname === "/api/chat") {
      const which = url.searchParams.get("call");
      if (which !== "expense" && which !== "contract") return json(400, { error: "unknown call" });
      const call = CALLS[which];
      const result = await call.run(tools);
      if (!isHitlPending(result)) return json(200, { say: call.say, done: result });
      const { approvalLevel, approvalId, description } = result.hitl_result;
      if (approvalLevel === "quick" && approvalId) {
        // The backend vouches for its signed-in user: a token for this request and this user only.
        const minted = await fetch(`${airlockUrl}/v1/requests/${approvalId}/embed-token`, {
          method: "POST",
          headers: { authorization: `Bearer ${appToken}`, "content-type": "application/json" },
          body: JSON.stringify({ reviewer: CHAT_USER, ttlSeconds: 900 }),
        });
        const { token } = (await minted.json()) as { token: string };
        return json(200, {
          say: call.say,
          level: "quick",
          requestId: approvalId,
          token,
          description,
        });
      }
      return json(200, {
        say: call.say,
        level: approvalLevel,
        requestId: approvalId,
        inboxUrl: `${airlockUrl}/requests/${approvalId}`,
        description,
      });
    }
    if (req.method === "GET" && url.pathname === "/api/result") {
      // Long-poll: waits up to 25 s for the decision, then resumes the tool (it runs once).
      const id = url.searchParams.get("id") ?? "";
      const which = url.searchParams.get("call");
      if (which !== "expense" && which !== "contract") return json(400, { error: "unknown call" });
      const request = await agent.waitFor(id, { timeoutMs: 25_000 }).catch(() => undefined);
      if (!request || request.status === "pending") return json(200, { pending: true });
      const tool = which === "expense" ? tools.approveExpense : tools.signContract;
      return json(200, { result: await tool.resume(id) });
    }
    return json(404, { error: "no such page" });
  }

  return {
    chatUrl,
    airlockUrl,
    inboxToken,
    airlock,
    async close() {
      await server?.close();
      chat.closeAllConnections();
      await new Promise<void>((resolve) => chat.close(() => resolve()));
      await airlock.close();
    },
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}
