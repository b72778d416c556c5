// The world the door contract runs in: one real server on loopback with every door open (the HTTP
// API and its bulk route, the inbox, the embeddable card, Slack through a fake Slack Web API, mail
// links through a local SMTP sink), on SQLite or PostgreSQL, with one credential per kind of caller.
import { join } from "node:path";
import pino from "pino";
import { parseChannelsConfig } from "../../src/channels/config.js";
import { createChannels, type RunningChannels, startChannels } from "../../src/channels/setup.js";
import type { Store } from "../../src/core/store.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { inboundDeps } from "../../src/server/channels.js";
import { type AirlockServer, createServer } from "../../src/server/server.js";
import { createToken, type Role, type TokenStore } from "../../src/server/tokens.js";
import { type FakeSlack, startFakeSlack } from "../helpers/fake-slack.js";
import { type SmtpSink, startSmtpSink } from "../helpers/smtp-sink.js";
import { legacyToken } from "../server/helpers.js";

export const EMBED_SECRET = "door-contract-embed-secret-0123456789";
export const SLACK_SIGNING = "door-contract-slack-signing-secret";
export const LINK_SECRET = "door-contract-link-secret-that-is-long-enough";
const silent = pino({ level: "silent" });

/** Who a door may be asked to speak as. Every request of the contract is created by agent `bot`
 * for group `ops` (alice, olga), unless a case says otherwise. */
export interface Credentials {
  /** agent "bot": the requester of the contract's requests. */
  agent: string;
  /** a legacy token of "dual", agent and reviewer in ops. */
  dual: string;
  /** a legacy token of "boss", agent and admin. */
  dualAdmin: string;
  /** reviewer "alice", ops. */
  alice: string;
  /** reviewer "olga", ops. */
  olga: string;
  /** reviewer "carol", finance: never an approver of the contract's requests. */
  carol: string;
  /** admin "root". */
  admin: string;
  /** app backend "chat-app": mints card tokens. */
  app: string;
}

export interface World {
  url: string;
  airlock: Airlock;
  tokens: TokenStore;
  credentials: Credentials;
  slack: FakeSlack;
  sink: SmtpSink;
  /** The port of the mail channel's reply listener (SMTP on loopback). */
  replyPort: number;
  /** A new token for a new reviewer in ops (to revoke without touching the others'). */
  reviewer(name: string): Promise<{ token: string; id: string }>;
  close(): Promise<void>;
}

export interface WorldOptions {
  store: Store;
  tokens: TokenStore;
  dir: string;
}

export async function startWorld(options: WorldOptions): Promise<World> {
  await options.tokens.migrate();
  const slack = await startFakeSlack();
  const sink = await startSmtpSink();
  try {
    return await assemble(options, slack, sink);
  } catch (err) {
    await slack.close();
    await sink.close();
    throw err;
  }
}

async function assemble(options: WorldOptions, slack: FakeSlack, sink: SmtpSink): Promise<World> {
  const config = parseChannelsConfig({
    channels: {
      "ops-slack": {
        type: "slack",
        botToken: "xoxb-door-contract",
        signingSecret: SLACK_SIGNING,
        channel: "#ops-approvals",
        apiUrl: slack.apiUrl,
      },
      "ops-mail": {
        type: "email",
        smtp: { host: "127.0.0.1", port: sink.port },
        from: "Airlock <airlock@example.com>",
        linkSecret: LINK_SECRET,
        replyDomain: "reply.example.com",
        replyLocalPart: "airlock",
        inbound: { smtpPort: 0, host: "127.0.0.1" },
      },
    },
    // The people behind Slack users and mail addresses. `bot` is the agent's own name: mapping a
    // Slack user or an address to it must never let it decide its own requests.
    identities: {
      alice: { slack: "U_ALICE", email: "alice@example.com", groups: ["ops"] },
      olga: { slack: "U_OLGA", email: "olga@example.com", groups: ["ops"] },
      carol: { slack: "U_CAROL", email: "carol@example.com", groups: ["finance"] },
      bot: { slack: "U_BOT", email: "bot@example.com", groups: ["ops"] },
    },
    routes: [{ match: { approver: "ops" }, channels: ["ops-slack", "ops-mail"] }],
    outbox: { pollMs: 50, baseDelayMs: 50 },
  });
  const channels = await createChannels(config, { logger: silent });
  const airlock = await createAirlock({
    store: options.store,
    logger: silent,
    notifiers: channels.router,
    onOutbox: () => running?.dispatcher.wake(),
  });
  let url = "";
  const serverChannels = {
    drivers: channels.drivers,
    identities: channels.identities,
    publicUrl: () => url,
  };
  const server: AirlockServer = createServer({
    airlock,
    auth: { tokens: options.tokens },
    logger: silent,
    channels: serverChannels,
    embedSecret: EMBED_SECRET,
    rateLimit: false,
  });
  url = (await server.listen({ port: 0, host: "127.0.0.1" })).url;
  const running: RunningChannels = await startChannels(channels, {
    store: options.store,
    inbound: inboundDeps(airlock, serverChannels, silent),
    logger: silent,
    publicUrl: () => url,
  });
  const make = async (name: string, roles: Role[], groups: string[] = []) =>
    (await createToken(options.tokens, { name, roles, groups })).token;
  const credentials: Credentials = {
    agent: await make("bot", ["agent"]),
    dual: await legacyToken(options.tokens, "dual", ["agent", "reviewer"], ["ops"]),
    dualAdmin: await legacyToken(options.tokens, "boss", ["agent", "admin"]),
    alice: await make("alice", ["reviewer"], ["ops"]),
    olga: await make("olga", ["reviewer"], ["ops"]),
    carol: await make("carol", ["reviewer"], ["finance"]),
    admin: await make("root", ["admin"]),
    app: await make("chat-app", ["app"]),
  };
  return {
    url,
    airlock,
    tokens: options.tokens,
    credentials,
    slack,
    sink,
    replyPort: replyPortOf(channels.drivers),
    async reviewer(name) {
      const made = await createToken(options.tokens, {
        name,
        roles: ["reviewer"],
        groups: ["ops"],
      });
      return { token: made.token, id: made.record.id };
    },
    async close() {
      await server.close();
      await running.close();
      await airlock.close();
      await options.tokens.close();
      await slack.close();
      await sink.close();
    },
  };
}

function replyPortOf(drivers: readonly { name: string }[]): number {
  const mail = drivers.find((d) => d.name === "ops-mail") as { replyPort?: number } | undefined;
  if (mail?.replyPort === undefined) throw new Error("the mail channel has no reply listener");
  return mail.replyPort;
}

/** Polls `fn` until it returns a value (bounded: 20 s). */
export async function until<T>(
  what: string,
  fn: () => T | undefined | Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function dbPath(dir: string): string {
  return join(dir, "airlock.db");
}
