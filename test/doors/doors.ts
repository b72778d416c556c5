// Every door, through its real entry point on the world's server: how each speaks as each kind of
// caller (door-contract.ts says what must happen).
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import { serve } from "@hono/node-server";
import { Client } from "@modelcontextprotocol/client";
import { createMcpHandler, InMemoryTransport, McpServer } from "@modelcontextprotocol/server";
import nodemailer from "nodemailer";
import { z } from "zod";
import { createMcpProxy, createMcpServer, parseProxyConfig } from "../../src/adapters/mcp.js";
import { newNonce, replyToken, signLink } from "../../src/channels/email/tokens.js";
import { runReview } from "../../src/channels/review.js";
import { ACTION, buttonValue } from "../../src/channels/slack/blocks.js";
import { viewDigestOf } from "../../src/core/review-view.js";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import { createEmbedTokens } from "../../src/server/embed/token.js";
import { revokeToken } from "../../src/server/tokens.js";
import { runCli } from "../cli/run-cli.js";
import { blockActions, interactionBody, signedHeaders } from "../helpers/fake-slack.js";
import {
  type Attempt,
  type Door,
  type NotApplicable,
  staleDigest,
  type Who,
} from "./door-contract.js";
import { EMBED_SECRET, LINK_SECRET, SLACK_SIGNING, until, type World } from "./world.js";

let seq = 0;
const fresh = (prefix: string) => `${prefix}${Date.now().toString(36)}${++seq}`;

/** The bearer token a token door uses for `who`; `derive` turns a reviewer's token into what the
 * door derives from it (a session, a card), for the revoked-then-used case. */
async function tokenFor(
  world: World,
  who: Who,
  derive?: (token: string) => Promise<string | undefined>,
): Promise<string | NotApplicable | undefined> {
  const c = world.credentials;
  switch (who.kind) {
    case "reviewer":
      return c[who.name];
    case "agent":
      return c.agent;
    case "dual":
      return c.dual;
    case "dual_admin":
      return c.dualAdmin;
    case "minted_by_agent":
      // An agent's token mints no other token: the attempt itself is refused (403).
      return undefined;
    case "requester":
      return c.alice;
    case "non_approver":
      return c.carol;
    case "revoked": {
      const r = await world.reviewer(fresh("rita"));
      await revokeToken(world.tokens, r.id);
      return r.token;
    }
    case "derived_from_revoked": {
      if (!derive) return { notApplicable: "nothing is derived from an API token at this door" };
      const r = await world.reviewer(fresh("rex"));
      const derived = await derive(r.token);
      await revokeToken(world.tokens, r.id);
      return derived;
    }
  }
}

async function call(
  world: World,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; text: string; json: unknown }> {
  const res = await fetch(world.url + path, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

/** An agent's token asking for another token (the only way an API token is minted). */
async function mintWithAgent(world: World): Promise<Attempt> {
  const r = await call(world, world.credentials.agent, "POST", "/v1/tokens", {
    name: "alice",
    roles: ["reviewer"],
    groups: ["ops"],
  });
  return { refused: r.status >= 400, said: `${r.status} ${r.text}` };
}

/** The digest of the view `GET /v1/requests/{id}/view` shows the token's holder, if it shows one. */
async function shownDigest(world: World, token: string, id: string): Promise<string | undefined> {
  const r = await call(world, token, "GET", `/v1/requests/${id}/view`);
  const digest = (r.json as { viewDigest?: unknown } | undefined)?.viewDigest;
  return r.status === 200 && typeof digest === "string" ? digest : undefined;
}

async function apiApprove(
  world: World,
  token: string,
  id: string,
  viewDigest?: string,
  decision: Record<string, unknown> = { outcome: "approved" },
) {
  const r = await call(world, token, "POST", `/v1/requests/${id}/decisions`, {
    ...decision,
    ...(viewDigest === undefined ? {} : { viewDigest }),
  });
  return { refused: r.status >= 400, said: `${r.status} ${r.text}` };
}

/** The API as a client that reads the view first (GET /v1/requests/{id}/view) and decides on it. */
export const apiDoor: Door = {
  name: "HTTP API",
  bindsView: true,
  async approve(world, who, request) {
    if (who.kind === "minted_by_agent") return mintWithAgent(world);
    const token = await tokenFor(world, who);
    if (token === undefined || typeof token !== "string") return token as NotApplicable;
    return apiApprove(world, token, request.id, await shownDigest(world, token, request.id));
  },
  async approveStale(world, request) {
    return apiApprove(world, world.credentials.alice, request.id, staleDigest(request));
  },
  async edit(world, who, request, editedArgs) {
    const token = await tokenFor(world, who);
    if (token === undefined || typeof token !== "string") return token as NotApplicable;
    const digest = await shownDigest(world, token, request.id);
    return apiApprove(world, token, request.id, digest, { outcome: "approved", editedArgs });
  },
  async respond(world, who, request, response) {
    if (who.kind === "minted_by_agent") return mintWithAgent(world);
    const token = await tokenFor(world, who);
    if (token === undefined || typeof token !== "string") return token as NotApplicable;
    const digest = await shownDigest(world, token, request.id);
    return apiApprove(world, token, request.id, digest, { outcome: "responded", response });
  },
};

async function bulkDecide(world: World, token: string, body: Record<string, unknown>) {
  const r = await call(world, token, "POST", "/v1/decisions", body);
  const result = (r.json as { results?: { ok: boolean }[] } | undefined)?.results?.[0];
  return { refused: r.status >= 400 || result?.ok !== true, said: `${r.status} ${r.text}` };
}

export const bulkApiDoor: Door = {
  name: "bulk API",
  async approve(world, who, request) {
    if (who.kind === "minted_by_agent") return mintWithAgent(world);
    const token = await tokenFor(world, who);
    if (token === undefined || typeof token !== "string") return token as NotApplicable;
    return bulkDecide(world, token, { ids: [request.id], outcome: "approved" });
  },
  async edit(world, who, request, editedArgs) {
    const token = await tokenFor(world, who);
    if (token === undefined || typeof token !== "string") return token as NotApplicable;
    return bulkDecide(world, token, {
      decisions: [{ id: request.id, outcome: "approved", editedArgs }],
    });
  },
  async respond(world, who, request, response) {
    if (who.kind === "minted_by_agent") return mintWithAgent(world);
    const token = await tokenFor(world, who);
    if (token === undefined || typeof token !== "string") return token as NotApplicable;
    // An answer is for one request: the `decisions` form, not `ids`.
    return bulkDecide(world, token, {
      decisions: [{ id: request.id, outcome: "responded", response }],
    });
  },
};

/** Signs in to the inbox with `token` as a browser does; the session cookie, or undefined. */
export async function signIn(world: World, token: string): Promise<string | undefined> {
  const form = await fetch(`${world.url}/login`);
  const html = await form.text();
  const loginCookie = (form.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
  const res = await fetch(`${world.url}/login`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: loginCookie },
    body: new URLSearchParams({ token, next: "/", _csrf: csrf }).toString(),
    redirect: "manual",
  });
  await res.text();
  const session = res.headers.getSetCookie().find((c) => c.startsWith("airlock_session="));
  return session?.split(";")[0];
}

/** The inbox session `who` acts with (a session is what the inbox derives from a token: sign in
 * first, act after), or the refusal met on the way. */
async function sessionFor(world: World, who: Who): Promise<string | Attempt | NotApplicable> {
  if (who.kind === "minted_by_agent") {
    const cookie = await signIn(world, world.credentials.dual);
    return cookie ?? { refused: true, said: "an agent's token could not sign in" };
  }
  if (who.kind === "derived_from_revoked") {
    const derived = await tokenFor(world, who, async (t) => signIn(world, t));
    return typeof derived === "string" ? derived : { refused: true, said: "no session" };
  }
  const token = await tokenFor(world, who);
  if (token === undefined || typeof token !== "string") return token as NotApplicable;
  const cookie = await signIn(world, token);
  return cookie ?? { refused: true, said: "the token could not sign in" };
}

/** The request page's approve form posted (confirmed) as a browser would, with the view digest the
 * page carries, or `digest` in its place. */
async function inboxApprove(
  world: World,
  cookie: string,
  request: ApprovalRequest,
  digest?: (shown: string) => string,
): Promise<Attempt> {
  const page = await fetch(`${world.url}/requests/${request.id}`, { headers: { cookie } });
  const html = await page.text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
  if (!csrf) return { refused: true, said: `request page ${page.status} (signed out)` };
  const shown = /name="viewDigest" value="([0-9a-f]{64})"/.exec(html)?.[1];
  const fields: Record<string, string> = { action: "approve", confirmed: "yes", _csrf: csrf };
  if (shown) fields.viewDigest = digest ? digest(shown) : shown;
  const res = await fetch(`${world.url}/requests/${request.id}/decide`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      cookie,
      origin: world.url,
    },
    body: new URLSearchParams(fields).toString(),
    redirect: "manual",
  });
  const text = await res.text();
  return { refused: res.status >= 400, said: `${res.status} ${text.slice(0, 300)}` };
}

export const inboxDoor: Door = {
  name: "inbox",
  bindsView: true,
  async approve(world, who, request) {
    const cookie = await sessionFor(world, who);
    if (typeof cookie !== "string") return cookie;
    return inboxApprove(world, cookie, request);
  },
  async approveStale(world, request) {
    const cookie = await signIn(world, world.credentials.alice);
    if (!cookie) throw new Error("alice could not sign in");
    return inboxApprove(world, cookie, request, () => staleDigest(request));
  },
  async labels(world, request) {
    const cookie = await signIn(world, world.credentials.alice);
    const html = await (
      await fetch(`${world.url}/requests/${request.id}`, { headers: { cookie: cookie ?? "" } })
    ).text();
    return {
      approve: buttonText(html, "btn-approve"),
      reject: buttonText(html, "btn-reject"),
    };
  },
};

/** The text of the inbox button with this id, entities decoded. */
function buttonText(html: string, id: string): string {
  const inner = new RegExp(`<button[^>]*id="${id}"[^>]*>([\\s\\S]*?)</button>`).exec(html)?.[1];
  if (inner === undefined) throw new Error(`no button #${id} on the page`);
  return inner
    .replace(/<[^>]+>/g, "")
    .replace(/&amp;/g, "&")
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .trim();
}

/** The inbox's bulk form: the request ticked on the queue and "Approve selected" posted (confirmed),
 * as a signed-in session would. The result page answers 200 whatever each item did, so the door
 * reads the record: an approval recorded or not. */
export const inboxBulkDoor: Door = {
  name: "inbox bulk form",
  bindsView: true,
  async approve(world, who, request) {
    const cookie = await sessionFor(world, who);
    if (typeof cookie !== "string") return cookie;
    return bulkApprove(world, cookie, request);
  },
  async approveStale(world, request) {
    const cookie = await signIn(world, world.credentials.alice);
    if (!cookie) throw new Error("alice could not sign in");
    return bulkApprove(world, cookie, request, () => staleDigest(request));
  },
};

/** The ticked request approved in bulk: "Approve selected", then the confirmation's "Yes, approve"
 * form (which carries the digest of each view it showed, or `digest` in its place) posted as a
 * browser would. */
async function bulkApprove(
  world: World,
  cookie: string,
  request: ApprovalRequest,
  digest?: (shown: string) => string,
): Promise<Attempt> {
  const queue = await fetch(`${world.url}/`, { headers: { cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await queue.text())?.[1];
  if (!csrf) return { refused: true, said: `queue ${queue.status} (signed out)` };
  const before = approvalsOf(await world.airlock.get(request.id));
  const post = async (fields: [string, string][]) => {
    const res = await fetch(`${world.url}/inbox/decisions`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        cookie,
        origin: world.url,
      },
      body: new URLSearchParams(fields).toString(),
      redirect: "manual",
    });
    return { status: res.status, text: await res.text() };
  };
  const asked = await post([
    ["_csrf", csrf],
    ["action", "approve"],
    ["scope", "ticked"],
    ["ids", request.id],
  ]);
  const form = /<form[^>]*>(?:(?!<\/form>)[\s\S])*id="bulk-confirm-all"[\s\S]*?<\/form>/.exec(
    asked.text,
  )?.[0];
  let said = `${asked.status} ${asked.text.replace(/<[^>]+>/g, " ").slice(0, 300)}`;
  if (form) {
    const fields = (form.match(/<input\b[^>]*>/g) ?? []).map((tag): [string, string] => {
      const name = /\sname="([^"]*)"/.exec(tag)?.[1] ?? "";
      const value = (/\svalue="([^"]*)"/.exec(tag)?.[1] ?? "").replace(/&amp;/g, "&");
      return [name, digest && name.startsWith("view_") ? digest(value) : value];
    });
    const done = await post([...fields, ["action", "approve"]]);
    said = `${done.status} ${done.text.replace(/<[^>]+>/g, " ").slice(0, 300)}`;
  }
  const recorded = approvalsOf(await world.airlock.get(request.id)) > before;
  return { refused: !recorded, said };
}

/** `airlock mcp` (the agent's own door): every tool it offers, called on the request's id as the
 * requester's agent, over MCP (an in-memory transport to the real server). */
export const mcpServerDoor: Door = {
  name: "MCP server",
  decides: false,
  async approve(world, _who, request) {
    const server = createMcpServer(world.airlock, { requester: "bot", maxWaitMs: 200 });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "door-contract", version: "1.0.0" });
    try {
      await client.connect(clientSide);
      const { tools } = await client.listTools();
      // Whatever a tool takes, it is given the request's id and an approving outcome.
      const args = {
        id: request.id,
        requestId: request.id,
        outcome: "approved",
        decision: "approve",
      };
      for (const tool of tools) {
        await client.callTool({ name: tool.name, arguments: args }).catch(() => undefined);
      }
      return { refused: true, said: `tools tried: ${tools.map((t) => t.name).join(", ")}` };
    } finally {
      await client.close();
      await server.close();
    }
  },
};

/** `airlock mcp-proxy` in front of an upstream MCP server on loopback: the agent calls every tool
 * the proxy offers (a gated `pay` among them, and the proxy's own, if any) with the request's id and
 * an approving outcome. The proxy opens gates; it decides none, and runs no gated call unapproved. */
export const mcpProxyDoor: Door = {
  name: "MCP proxy",
  decides: false,
  async approve(world, _who, request) {
    const ran: unknown[] = [];
    const upstream = createMcpHandler(() => {
      const server = new McpServer({ name: "upstream", version: "1" });
      server.registerTool("pay", { inputSchema: z.object({ amount: z.number() }) }, async (a) => {
        ran.push(a);
        return { content: [{ type: "text", text: `paid ${a.amount}` }] };
      });
      return server;
    });
    const http = serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => upstream.fetch(req) });
    await new Promise<void>((resolve) => http.once("listening", () => resolve()));
    const proxy = createMcpProxy({
      api: world.airlock,
      config: parseProxyConfig({ rules: [{ name: "payments", tools: "pay" }] }),
      upstream: { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp` },
      requester: "bot",
      maxWaitMs: 200,
      log: () => {},
    });
    const client = new Client({ name: "door-contract", version: "1.0.0" });
    try {
      await proxy.start();
      const [clientSide, proxySide] = InMemoryTransport.createLinkedPair();
      await proxy.server.connect(proxySide);
      await client.connect(clientSide);
      const { tools } = await client.listTools();
      const args = { amount: 5, id: request.id, requestId: request.id, outcome: "approved" };
      for (const tool of tools) {
        await client.callTool({ name: tool.name, arguments: args }).catch(() => undefined);
      }
      if (ran.length > 0)
        return { refused: false, said: `the gated tool ran: ${JSON.stringify(ran)}` };
      return { refused: true, said: `tools tried: ${tools.map((t) => t.name).join(", ")}` };
    } finally {
      await client.close();
      await proxy.close();
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        (http as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
    }
  },
};

/** A card token the world's server would accept, as if minted by `minter` (for cases no minting
 * route would serve any more: a card minted with an agent's token before that was refused). */
async function forgedCard(
  world: World,
  request: ApprovalRequest,
  reviewer: string,
  minter: "bot" | "dual",
): Promise<string> {
  const record = (await world.tokens.list()).find((t) => t.name === minter);
  return createEmbedTokens(EMBED_SECRET).mint({
    requestId: request.id,
    reviewer,
    groups: ["ops"],
    expiresAt: Date.now() + 60_000,
    mintedBy: minter,
    minterTokenId: record?.id ?? "",
    minterRoles: record ? [...record.roles] : ["agent"],
  });
}

async function mintCard(
  world: World,
  minter: string,
  request: ApprovalRequest,
  reviewer: string,
): Promise<{ token?: string; said: string }> {
  const r = await call(world, minter, "POST", `/v1/requests/${request.id}/embed-token`, {
    reviewer,
  });
  const token = (r.json as { token?: string } | undefined)?.token;
  return { ...(token ? { token } : {}), said: `mint: ${r.status} ${r.text}` };
}

async function decideWithCard(
  world: World,
  card: string,
  request: ApprovalRequest,
  decision: Record<string, unknown> = { outcome: "approved" },
) {
  const r = await call(world, card, "POST", `/v1/embed/requests/${request.id}/decisions`, decision);
  return { refused: r.status >= 400, said: `decide: ${r.status} ${r.text}` };
}

/** A card for `who` decides `request` (approves it, or sends `decision`), however `who` could come
 * by a card. */
async function cardDecides(
  world: World,
  who: Who,
  request: ApprovalRequest,
  decision?: Record<string, unknown>,
): Promise<Attempt> {
  const c = world.credentials;
  const { app } = c;
  switch (who.kind) {
    case "reviewer": {
      const minted = await mintCard(world, app, request, who.name);
      if (!minted.token) return { refused: true, said: minted.said };
      return decideWithCard(world, minted.token, request, decision);
    }
    case "agent":
    case "dual":
    case "dual_admin": {
      // The agent (or a token it holds) asks for a card for a real approver.
      const minter = who.kind === "agent" ? c.agent : who.kind === "dual" ? c.dual : c.dualAdmin;
      const minted = await mintCard(world, minter, request, "alice");
      if (minted.token) return decideWithCard(world, minted.token, request, decision);
      return { refused: true, said: minted.said };
    }
    case "minted_by_agent": {
      // A card signed by this server but minted with an agent's token (as an older server did).
      return decideWithCard(
        world,
        await forgedCard(world, request, "alice", "bot"),
        request,
        decision,
      );
    }
    case "requester":
    case "non_approver": {
      const reviewer = who.kind === "requester" ? "alice" : "carol";
      const minted = await mintCard(world, app, request, reviewer);
      if (minted.token) return decideWithCard(world, minted.token, request, decision);
      // Refused at the mint; a card that reached them anyway still decides nothing.
      const card = createEmbedTokens(EMBED_SECRET).mint({
        requestId: request.id,
        reviewer,
        groups: who.kind === "requester" ? ["ops"] : ["finance"],
        expiresAt: Date.now() + 60_000,
        mintedBy: "chat-app",
        minterTokenId: (await world.tokens.list()).find((t) => t.name === "chat-app")?.id ?? "",
        minterRoles: ["app"],
      });
      const used = await decideWithCard(world, card, request, decision);
      return { refused: used.refused, said: `${minted.said}; ${used.said}` };
    }
    case "revoked": {
      const name = fresh("rita");
      const r = await world.reviewer(name);
      await revokeToken(world.tokens, r.id);
      const minted = await mintCard(world, app, request, name);
      if (minted.token) return decideWithCard(world, minted.token, request, decision);
      return { refused: true, said: minted.said };
    }
    case "derived_from_revoked": {
      const name = fresh("rex");
      const r = await world.reviewer(name);
      const minted = await mintCard(world, app, request, name);
      if (!minted.token) throw new Error(`no card for a live reviewer: ${minted.said}`);
      await revokeToken(world.tokens, r.id);
      return decideWithCard(world, minted.token, request, decision);
    }
  }
}

export const cardDoor: Door = {
  name: "embed card",
  approve: (world, who, request) => cardDecides(world, who, request),
  edit: (world, who, request, editedArgs) =>
    cardDecides(world, who, request, { outcome: "approved", editedArgs }),
  respond: (world, who, request, response) =>
    cardDecides(world, who, request, { outcome: "responded", response }),
  async labels(world, request) {
    const minted = await mintCard(world, world.credentials.app, request, "alice");
    if (!minted.token) throw new Error(minted.said);
    const r = await call(world, minted.token, "GET", `/v1/embed/requests/${request.id}`);
    const buttons = (r.json as { buttons?: { approve: string; reject: string } }).buttons;
    if (!buttons) throw new Error(`the card's data carries no button words: ${r.text}`);
    return { approve: buttons.approve, reject: buttons.reject };
  },
};

/** The configured person a door without tokens (Slack, mail, the console) speaks as for `who`: the
 * listed approvers alice and olga, alice on her own request, carol (finance) who approves nothing;
 * or why the case does not apply, since such a door knows people by the server's configuration, and
 * an agent holds no `identity` there. */
function personFor(
  who: Who,
  identity: string,
  /** Why a revoked token means nothing at this door. */
  noToken: string,
): "alice" | "olga" | "carol" | NotApplicable {
  switch (who.kind) {
    case "reviewer":
      return who.name;
    case "requester":
      return "alice"; // alice requested it
    case "non_approver":
      return "carol";
    case "agent":
    case "dual":
    case "dual_admin":
    case "minted_by_agent":
      return {
        notApplicable: `an agent holds no ${identity}: the door knows people by the server's configuration (one mapped to the agent's own name is the requester case)`,
      };
    case "revoked":
    case "derived_from_revoked":
      return {
        notApplicable: noToken,
      };
  }
}

const SLACK_USERS = { alice: "U_ALICE", olga: "U_OLGA", carol: "U_CAROL" } as const;

/** A signed click of Approve by `user`, its value as the channel posts it (the request and the
 * digest of the view its message shows), or with `digest` in its place. */
async function slackApprove(
  world: World,
  user: string,
  request: ApprovalRequest,
  digest?: string,
): Promise<Attempt> {
  const approvedBy = (r: ApprovalRequest) =>
    r.decisions.filter((d) => d.outcome === "approved" && d.channel === "slack").length;
  const before = approvedBy(await world.airlock.get(request.id));
  const where = { channel: "C0APPROVALS", ts: `1700000000.${String(++seq).padStart(6, "0")}` };
  const value = buttonValue(
    request.id,
    digest ?? viewDigestOf(await world.airlock.get(request.id)),
  );
  const body = interactionBody(blockActions(user, ACTION.approve, value, where));
  const res = await fetch(`${world.url}/channels/ops-slack/interactions`, {
    method: "POST",
    headers: signedHeaders(body, { secret: SLACK_SIGNING }),
    body,
  });
  const text = await res.text();
  // Slack gets 200 whatever happened; the person is told in an ephemeral message.
  const told = world.slack
    .callsTo("chat.postEphemeral")
    .filter((c) => String(c.args.user) === user)
    .map((c) => String(c.args.text))
    .at(-1);
  const recorded = approvedBy(await world.airlock.get(request.id)) > before;
  return { refused: !recorded, said: `${res.status} ${text} ${told ?? ""}` };
}

export const slackDoor: Door = {
  name: "Slack",
  bindsView: true,
  async approve(world, who, request) {
    const person = personFor(
      who,
      "Slack identity",
      "Slack users are mapped to reviewers by the server's configuration, not by API tokens",
    );
    if (typeof person !== "string") return person;
    return slackApprove(world, SLACK_USERS[person], request);
  },
  async approveStale(world, request) {
    return slackApprove(world, SLACK_USERS.alice, request, staleDigest(request));
  },

  async labels(world, request) {
    // The message the channel posted through the outbox to the fake Slack Web API.
    const posted = await until("the Slack post", () =>
      world.slack
        .callsTo("chat.postMessage")
        .find((c) => JSON.stringify(c.args.metadata ?? {}).includes(request.id)),
    );
    const blocks = JSON.stringify(posted.args.blocks ?? []);
    const textOf = (actionId: string): string => {
      const parsed = JSON.parse(blocks) as {
        elements?: { action_id?: string; text?: { text?: string } }[];
      }[];
      for (const block of parsed) {
        for (const e of block.elements ?? [])
          if (e.action_id === actionId) return e.text?.text ?? "";
      }
      throw new Error(`no ${actionId} button in the Slack message`);
    };
    return { approve: textOf(ACTION.approve), reject: textOf(ACTION.reject) };
  },
};

const MAIL = {
  alice: "alice@example.com",
  olga: "olga@example.com",
  carol: "carol@example.com",
} as const;

/** A link exactly as the channel signs it for that address (one mail, one nonce, the digest of the
 * view the mail showed, or `digest` in its place), confirmed by POST. */
async function linkApprove(
  world: World,
  to: string,
  request: ApprovalRequest,
  digest?: string,
): Promise<Attempt> {
  const token = signLink(LINK_SECRET, {
    r: request.id,
    to,
    o: "approved",
    m: "approve_all",
    exp: Math.floor(Date.now() / 1000) + 3600,
    n: newNonce(),
    v: digest ?? viewDigestOf(await world.airlock.get(request.id)),
  });
  const link = `${world.url}/channels/ops-mail/l/${token}`;
  const res = await fetch(link, { method: "POST", body: new URLSearchParams({ token }) });
  const text = await res.text();
  return { refused: res.status >= 400, said: `${res.status} ${text.slice(0, 300)}` };
}

export const mailLinkDoor: Door = {
  name: "mail link",
  bindsView: true,
  async approve(world, who, request) {
    const to = mailAddressFor(who);
    if (typeof to !== "string") return to;
    return linkApprove(world, to, request);
  },
  async approveStale(world, request) {
    return linkApprove(world, MAIL.alice, request, staleDigest(request));
  },
  async labels(world, request) {
    // The mail the channel sent alice through the outbox to the local SMTP sink.
    const mail = await until("alice's mail", () =>
      world.sink.mails.find(
        (m) =>
          m.envelope.to.includes("alice@example.com") && String(m.parsed.text).includes(request.id),
      ),
    );
    const text = String(mail.parsed.text);
    const line = (verb: RegExp) =>
      (text.split("\n").find((l) => /^- /.test(l) && verb.test(l) && /https?:\/\//.test(l)) ?? "")
        .replace(/^- /, "")
        .replace(/:\s*\S+$/, "")
        .trim();
    return { approve: line(/^- Approve/), reject: line(/^- Reject/) };
  },
};

/** A reply to the request's mail, `APPROVE ALL`, over SMTP to the mail channel's reply listener,
 * from the address in `From` with the same envelope sender (a proven sender). */
export const mailReplyDoor: Door = {
  name: "mail reply",
  bindsView: true,
  async approve(world, who, request) {
    const to = mailAddressFor(who);
    if (typeof to !== "string") return to;
    return replyApprove(world, to, request);
  },
  async approveStale(world, request) {
    return replyApprove(world, MAIL.alice, request, staleDigest(request));
  },
};

/** `APPROVE ALL` from `from` to the reply address the channel gives that address (bound to the view
 * its mail showed, or to `digest`). */
async function replyApprove(
  world: World,
  from: string,
  request: ApprovalRequest,
  digest?: string,
): Promise<Attempt> {
  const token = replyToken(
    LINK_SECRET,
    request.id,
    from,
    Date.now() + 3_600_000,
    digest ?? viewDigestOf(await world.airlock.get(request.id)),
  );
  if (!token) throw new Error(`no reply token for ${request.id}`);
  const replyTo = `airlock+${token}@reply.example.com`;
  const before = approvalsOf(await world.airlock.get(request.id));
  const client = nodemailer.createTransport({
    host: "127.0.0.1",
    port: world.replyPort,
    secure: false,
    ignoreTLS: true,
  });
  try {
    // The listener answers once the reply was handled.
    await client.sendMail({
      from,
      to: replyTo,
      envelope: { from, to: [replyTo] },
      subject: `Re: ${request.title}`,
      text: "APPROVE ALL\n",
    });
  } finally {
    client.close();
  }
  const recorded = approvalsOf(await world.airlock.get(request.id)) > before;
  return { refused: !recorded, said: recorded ? "decided" : "nothing recorded" };
}

const approvalsOf = (r: ApprovalRequest) =>
  r.decisions.filter((d) => d.outcome === "approved").length;

/** The address a mail door speaks from for `who`, or why it cannot. */
function mailAddressFor(who: Who): string | NotApplicable {
  const person = personFor(
    who,
    "mail address",
    "mail addresses are mapped to reviewers by the server's configuration, not by API tokens",
  );
  return typeof person === "string" ? MAIL[person] : person;
}

/** The operator's console (`airlock review`'s loop) on the world's own database, fed `a` on its input
 * stream, as the person at the terminal (`--as NAME --group G`). It walks the queue the operator may
 * decide, so every other pending request is cancelled first: the case's request is the only one. */
export const consoleDoor: Door = {
  name: "console",
  bindsView: true,
  async approve(world, who, request) {
    const person = personFor(
      who,
      "credential at the console",
      "the console acts as the person at the database's machine, with no token",
    );
    if (typeof person !== "string") return person;
    const as = { name: person, groups: person === "carol" ? ["finance"] : ["ops"] };
    // Every other pending request, however many the cases before left (a page at a time).
    for (let page = 0; page < 100; page++) {
      const others = (await world.airlock.list({ status: "pending", limit: 100 })).items.filter(
        (other) => other.id !== request.id,
      );
      if (others.length === 0) break;
      for (const other of others) await world.airlock.cancel(other.id, { reason: "door contract" });
    }
    const before = approvalsOf(await world.airlock.get(request.id));
    const input = new PassThrough();
    const output = new PassThrough();
    let printed = "";
    output.on("data", (d: Buffer) => {
      printed += d.toString();
    });
    input.write("a\n");
    // Closed once the first answer is read: the console stops at the next prompt.
    setTimeout(() => input.end(), 500);
    await runReview(world.airlock, {
      input,
      output,
      reviewer: as.name,
      groups: as.groups,
      timeoutMs: 5_000,
      revisionWaitMs: 0,
    });
    const recorded = approvalsOf(await world.airlock.get(request.id)) > before;
    return { refused: !recorded, said: printed.slice(-400) };
  },
};

/** `airlock decide ID approve` against the world's server (AIRLOCK_URL and AIRLOCK_TOKEN), as a
 * shell script gating a deploy would run it. */
export const cliDoor: Door = {
  name: "CLI",
  bindsView: true,
  async approve(world, who, request) {
    if (who.kind === "minted_by_agent") {
      const minted = await runCli(
        ["token", "create", "--name", "alice", "--role", "reviewer", "--group", "ops"],
        { ...process.env, AIRLOCK_URL: world.url, AIRLOCK_TOKEN: world.credentials.agent },
      );
      return { refused: minted.code !== 0, said: `${minted.code} ${minted.stderr}` };
    }
    const token = await tokenFor(world, who);
    if (token === undefined || typeof token !== "string") return token as NotApplicable;
    return cliApprove(world, token, request);
  },
  async approveStale(world, request) {
    return cliApprove(world, world.credentials.alice, request, staleDigest(request));
  },
  async edit(world, who, request, editedArgs) {
    const token = await tokenFor(world, who);
    if (token === undefined || typeof token !== "string") return token as NotApplicable;
    const r = await runCli(
      ["decide", request.id, "approve", "--edit", JSON.stringify(editedArgs), "--json"],
      { ...process.env, AIRLOCK_URL: world.url, AIRLOCK_TOKEN: token },
    );
    return { refused: r.code !== 0, said: `exit ${r.code}: ${r.stderr.trim()}` };
  },
  async respond(world, who, request, response) {
    if (who.kind === "minted_by_agent") return this.approve(world, who, request);
    const token = await tokenFor(world, who);
    if (token === undefined || typeof token !== "string") return token as NotApplicable;
    const r = await runCli(["decide", request.id, "respond", "--answer", response, "--json"], {
      ...process.env,
      AIRLOCK_URL: world.url,
      AIRLOCK_TOKEN: token,
    });
    return { refused: r.code !== 0, said: `exit ${r.code}: ${r.stderr.trim()}` };
  },
};

/** `airlock decide ID approve` (the digest of the view as it stands: the command reads it), or with
 * `--view-digest` given. */
async function cliApprove(
  world: World,
  token: string,
  request: ApprovalRequest,
  digest?: string,
): Promise<Attempt> {
  const r = await runCli(
    [
      "decide",
      request.id,
      "approve",
      "--json",
      ...(digest === undefined ? [] : ["--view-digest", digest]),
    ],
    { ...process.env, AIRLOCK_URL: world.url, AIRLOCK_TOKEN: token },
  );
  return { refused: r.code !== 0, said: `exit ${r.code}: ${r.stderr.trim()}` };
}

export const ALL_DOORS: Door[] = [
  apiDoor,
  bulkApiDoor,
  inboxDoor,
  inboxBulkDoor,
  cardDoor,
  slackDoor,
  mailLinkDoor,
  mailReplyDoor,
  cliDoor,
  consoleDoor,
  mcpServerDoor,
  mcpProxyDoor,
];
