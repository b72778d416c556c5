// A fake Slack on 127.0.0.1 (port 0): the Web API methods the Slack channel calls, each call recorded,
// messages kept so conversations.history can answer from them; and a Socket Mode WebSocket server
// (apps.connections.open points at it) that says `hello`, sends envelopes and records their acks;
// and what Slack sends an app: signed requests, interaction payloads.
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";
import { slackSignature } from "../../src/channels/slack/index.js";

export interface FakeCall {
  method: string;
  args: Record<string, unknown>;
  /** The bearer token the call carried. */
  token: string | undefined;
}

export interface FakeMessage {
  channel: string;
  ts: string;
  text?: string;
  blocks?: unknown[];
  metadata?: { event_type: string; event_payload: Record<string, unknown> };
  thread_ts?: string;
  /** Who posted it: a bot (its id) or a user. */
  bot_id?: string;
  user?: string;
}

/** A failure to answer the next call of a method with: a Slack error, or HTTP 429. */
export type FakeFailure = { error: string } | { rateLimitedSeconds: number };

export interface FakeSlack {
  /** The Web API base URL, for `apiUrl`. */
  apiUrl: string;
  calls: FakeCall[];
  callsTo(method: string): FakeCall[];
  /** Top-level and thread messages, as posted and updated. */
  messages: FakeMessage[];
  failNext(method: string, failure: FakeFailure): void;
  /** Resolves once a Socket Mode client is connected (its `hello` sent). */
  connected(): Promise<void>;
  /** Sends an envelope over Socket Mode; resolves with the client's ack payload. */
  sendEnvelope(type: string, payload: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** The bot id of every `xoxb-` token (what `auth.test` answers). */
export const FAKE_BOT_ID = "BBOT";

/** The id channels given by name resolve to. */
export const FAKE_CHANNEL_ID = "C0APPROVALS";

export async function startFakeSlack(): Promise<FakeSlack> {
  const calls: FakeCall[] = [];
  const messages: FakeMessage[] = [];
  const failures = new Map<string, FakeFailure[]>();
  let nextTs = 1_700_000_000;
  let envelopes = 0;
  const acks = new Map<string, (payload: Record<string, unknown>) => void>();
  let socket: WebSocket | undefined;
  let connectedWaiters: (() => void)[] = [];

  const server = createServer((req, res) => {
    void answer(req, res).catch((err: unknown) => {
      res.writeHead(500).end(String(err));
    });
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on("upgrade", (req, sock, head) => {
    if (req.url !== "/socket-mode") {
      sock.destroy();
      return;
    }
    wss.handleUpgrade(req, sock, head, (ws) => {
      socket = ws;
      ws.on("message", (data) => {
        const msg = JSON.parse(String(data)) as { envelope_id?: string; payload?: unknown };
        const done = msg.envelope_id ? acks.get(msg.envelope_id) : undefined;
        if (done && msg.envelope_id) {
          acks.delete(msg.envelope_id);
          done((msg.payload as Record<string, unknown>) ?? {});
        }
      });
      ws.send(JSON.stringify({ type: "hello", num_connections: 1 }));
      for (const w of connectedWaiters) w();
      connectedWaiters = [];
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    const method = (req.url ?? "").replace(/^\/api\//, "").split("?")[0] ?? "";
    const args = parseArgs(raw, req.headers["content-type"]);
    const auth = req.headers.authorization;
    const token = auth?.startsWith("Bearer ") ? auth.slice(7) : (args.token as string | undefined);
    calls.push({ method, args, token });
    const failure = failures.get(method)?.shift();
    if (failure && "rateLimitedSeconds" in failure) {
      res.writeHead(429, {
        "content-type": "application/json",
        "retry-after": String(failure.rateLimitedSeconds),
      });
      res.end(JSON.stringify({ ok: false, error: "ratelimited" }));
      return;
    }
    const body = failure ? { ok: false, error: failure.error } : respond(method, args, token);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  }

  function respond(
    method: string,
    args: Record<string, unknown>,
    token: string | undefined,
  ): Record<string, unknown> {
    switch (method) {
      case "chat.postMessage": {
        const given = String(args.channel ?? "");
        const channel = given.startsWith("#") ? FAKE_CHANNEL_ID : given;
        const ts = `${nextTs++}.000100`;
        // As Slack does: a bot token's message carries the bot's id, a user token's the user's.
        const message: FakeMessage = token?.startsWith("xoxb-")
          ? { channel, ts, bot_id: FAKE_BOT_ID }
          : { channel, ts, user: "U_TOKEN_OWNER" };
        if (typeof args.text === "string") message.text = args.text;
        if (Array.isArray(args.blocks)) message.blocks = args.blocks;
        if (args.metadata) message.metadata = args.metadata as FakeMessage["metadata"];
        if (typeof args.thread_ts === "string") message.thread_ts = args.thread_ts;
        messages.push(message);
        return { ok: true, channel, ts, message };
      }
      case "chat.update": {
        const m = messages.find((x) => x.channel === args.channel && x.ts === args.ts);
        if (!m) return { ok: false, error: "message_not_found" };
        if (typeof args.text === "string") m.text = args.text;
        m.blocks = Array.isArray(args.blocks) ? args.blocks : [];
        return { ok: true, channel: m.channel, ts: m.ts };
      }
      case "chat.postEphemeral":
        return { ok: true, message_ts: `${nextTs++}.000200` };
      case "views.open":
        return { ok: true, view: { id: `V${nextTs++}`, ...(args.view as object) } };
      case "conversations.history": {
        const latest = Number(args.latest ?? Number.POSITIVE_INFINITY);
        const inclusive = args.inclusive === true || args.inclusive === "true";
        const limit = Number(args.limit ?? 100);
        const found = messages
          .filter((m) => m.channel === args.channel && m.thread_ts === undefined)
          .filter((m) => (inclusive ? Number(m.ts) <= latest : Number(m.ts) < latest))
          .sort((a, b) => Number(b.ts) - Number(a.ts))
          .slice(0, limit)
          .map((m) => {
            const withMeta =
              args.include_all_metadata === true || args.include_all_metadata === "true";
            const { metadata, ...rest } = m;
            return withMeta && metadata ? { ...rest, metadata } : rest;
          });
        return { ok: true, messages: found, has_more: false };
      }
      case "auth.test":
        return { ok: true, user_id: "UBOT", bot_id: FAKE_BOT_ID, team_id: "T1" };
      case "apps.connections.open":
        return { ok: true, url: `ws://127.0.0.1:${port}/socket-mode` };
      default:
        return { ok: false, error: "unknown_method" };
    }
  }

  return {
    apiUrl: `http://127.0.0.1:${port}/api/`,
    calls,
    callsTo: (method) => calls.filter((c) => c.method === method),
    messages,
    failNext(method, failure) {
      const queue = failures.get(method) ?? [];
      queue.push(failure);
      failures.set(method, queue);
    },
    connected() {
      if (socket && socket.readyState === socket.OPEN) return Promise.resolve();
      return new Promise((resolve) => connectedWaiters.push(resolve));
    },
    sendEnvelope(type, payload) {
      if (!socket) return Promise.reject(new Error("no Socket Mode client is connected"));
      const id = `env-${++envelopes}`;
      const acked = new Promise<Record<string, unknown>>((resolve) => acks.set(id, resolve));
      socket.send(
        JSON.stringify({ envelope_id: id, type, payload, accepts_response_payload: true }),
      );
      return acked;
    },
    async close() {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** The Web API's form body (objects such as `blocks` JSON-encoded) or a JSON body. */
function parseArgs(raw: string, contentType: string | undefined): Record<string, unknown> {
  if (contentType?.includes("application/json")) {
    return raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    const looksJson = value.startsWith("{") || value.startsWith("[");
    out[key] = looksJson ? JSON.parse(value) : value;
  }
  return out;
}

// --- what Slack sends --------------------------------------------------------------------------

/** Headers Slack would send with `body`, signed with `secret` at `atMs`. */
export function signedHeaders(
  body: string,
  options: { secret: string; atMs?: number; contentType?: string },
): Record<string, string> {
  const timestamp = String(Math.floor((options.atMs ?? Date.now()) / 1000));
  return {
    "content-type": options.contentType ?? "application/x-www-form-urlencoded",
    "x-slack-request-timestamp": timestamp,
    "x-slack-signature": slackSignature(options.secret, timestamp, body),
  };
}

export function interactionBody(payload: Record<string, unknown>): string {
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

let actionSeq = 0;

/** A block_actions payload: `user` clicked `actionId` on the message of `requestId`. `ticked` lists
 * the ticked item positions (omitted: no item state at all). */
export function blockActions(
  user: string,
  actionId: string,
  requestId: string,
  where: { channel: string; ts: string },
  ticked?: number[],
): Record<string, unknown> {
  const payload: Record<string, unknown> = {
    type: "block_actions",
    user: { id: user },
    trigger_id: `trigger-${++actionSeq}`,
    channel: { id: where.channel },
    container: { type: "message", message_ts: where.ts, channel_id: where.channel },
    actions: [
      {
        action_id: actionId,
        block_id: "airlock_decision",
        value: requestId,
        type: "button",
        action_ts: `1700000${actionSeq}.123456`,
      },
    ],
  };
  if (ticked) {
    payload.state = {
      values: {
        airlock_items: {
          airlock_items_0: {
            type: "checkboxes",
            selected_options: ticked.map((i) => ({ value: String(i) })),
          },
        },
      },
    };
  }
  return payload;
}
