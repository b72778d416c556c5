// A real Airlock server on an ephemeral loopback port, with one token per kind of caller, and small
// helpers to call it and to read Server-Sent Events.
import { join } from "node:path";
import pino, { type Logger } from "pino";
import type { ZodType } from "zod";
import type { Store } from "../../src/core/store.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { type AirlockServer, createServer, type ServerOptions } from "../../src/server/server.js";
import {
  createToken,
  hashToken,
  memoryTokenStore,
  newTokenSecret,
  type Role,
  type TokenStore,
} from "../../src/server/tokens.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";

export interface Tokens {
  /** agent "bot" */
  agent: string;
  /** agent "bot2" */
  agent2: string;
  /** reviewer "alice", group ops */
  alice: string;
  /** reviewer "bob", group finance */
  bob: string;
  /** admin "root" */
  admin: string;
  /** agent and reviewer "dual", group ops: a token stored before an agent's token could no longer
   * carry a deciding role. It creates and reads; it never decides (core/authority.ts). */
  dual: string;
  /** app backend "chat-app": mints approval-card tokens */
  app: string;
  /** reviewer "olga", group ops: a second person in ops */
  ops2: string;
}

export interface TestServer {
  url: string;
  server: AirlockServer;
  airlock: Airlock;
  tokenStore: TokenStore;
  tokens: Tokens;
  dbPath: string;
  call(
    token: string | undefined,
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<Reply>;
  close(): Promise<void>;
}

export interface Reply {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: test replies are inspected field by field
  body: any;
  text: string;
}

export interface StartOptions extends Partial<Omit<ServerOptions, "airlock" | "auth">> {
  store?: Store;
  schemas?: Record<string, ZodType>;
  logger?: Logger;
}

export async function startTestServer(options: StartOptions = {}): Promise<TestServer> {
  const t = tempDir("airlock-server-");
  const dbPath = join(t.dir, "airlock.db");
  const { store, schemas, ...serverOptions } = options;
  const airlock = await createAirlock({
    store: store ?? sqliteStore(dbPath),
    ...(schemas ? { schemas } : {}),
    logger: options.logger ?? pino({ level: "silent" }),
  });
  const tokenStore = memoryTokenStore();
  const make = async (name: string, roles: Role[], groups: string[] = []) =>
    (await createToken(tokenStore, { name, roles, groups })).token;
  const tokens: Tokens = {
    agent: await make("bot", ["agent"]),
    agent2: await make("bot2", ["agent"]),
    alice: await make("alice", ["reviewer"], ["ops"]),
    bob: await make("bob", ["reviewer"], ["finance"]),
    admin: await make("root", ["admin"]),
    dual: await legacyToken(tokenStore, "dual", ["agent", "reviewer"], ["ops"]),
    app: await make("chat-app", ["app"]),
    ops2: await make("olga", ["reviewer"], ["ops"]),
  };
  const server = createServer({
    rateLimit: false,
    ...serverOptions,
    airlock,
    auth: { tokens: tokenStore },
  });
  const { url } = await server.listen({ port: 0, host: "127.0.0.1" });
  return {
    url,
    server,
    airlock,
    tokenStore,
    tokens,
    dbPath,
    call: (token, method, path, body, headers) => call(url, token, method, path, body, headers),
    async close() {
      await server.close();
      await airlock.close();
      t.cleanup();
    },
  };
}

export async function call(
  url: string,
  token: string | undefined,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const h: Record<string, string> = { ...headers };
  if (token !== undefined) h.authorization = `Bearer ${token}`;
  let payload: string | undefined;
  if (body !== undefined) {
    payload = typeof body === "string" ? body : JSON.stringify(body);
    h["content-type"] ??= "application/json";
  }
  const res = await fetch(url + path, {
    method,
    headers: h,
    ...(payload === undefined ? {} : { body: payload }),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** A request body for `POST /v1/requests`. */
export function gate(title: string, extra: Record<string, unknown> = {}) {
  return { title, ...extra };
}

export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/** Reads Server-Sent Events from a fetch response body. */
export async function* readSse(res: Response): AsyncGenerator<SseEvent> {
  if (!res.body) return;
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of res.body) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    let cut = buffer.indexOf("\n\n");
    while (cut !== -1) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      cut = buffer.indexOf("\n\n");
      const e: SseEvent = { data: "" };
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "data") data.push(value);
        else if (field === "id") e.id = value;
        else if (field === "event") e.event = value;
      }
      if (data.length === 0 && e.id === undefined && e.event === undefined) continue;
      e.data = data.join("\n");
      yield e;
    }
  }
}

/** Opens the event stream and returns an iterator over it, after its `ready` message. */
export async function openEvents(
  url: string,
  token: string,
  options: { lastEventId?: string; query?: string; signal: AbortSignal },
): Promise<AsyncGenerator<SseEvent>> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${token}`,
    accept: "text/event-stream",
  };
  if (options.lastEventId !== undefined) headers["last-event-id"] = options.lastEventId;
  const res = await fetch(`${url}/v1/events${options.query ?? ""}`, {
    headers,
    signal: options.signal,
  });
  if (res.status !== 200) throw new Error(`events answered ${res.status}: ${await res.text()}`);
  const it = readSse(res);
  const first = await it.next();
  if (first.done || first.value.event !== "ready")
    throw new Error("the stream did not start with `ready`");
  return it;
}

/** Takes `n` events from `it`, failing after `ms`. */
export async function take(
  it: AsyncGenerator<SseEvent>,
  n: number,
  ms = 5000,
): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  const deadline = Date.now() + ms;
  while (out.length < n) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new Error(`got ${out.length} of ${n} events in ${ms} ms`);
    let timer: NodeJS.Timeout | undefined;
    const next = await Promise.race([
      it.next(),
      new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), remaining);
      }),
    ]);
    clearTimeout(timer);
    if (next === "late") throw new Error(`got ${out.length} of ${n} events in ${ms} ms`);
    if (next.done) throw new Error(`the stream ended after ${out.length} of ${n} events`);
    out.push(next.value);
  }
  return out;
}

/** Stores a token as an older server could have (roles `createToken` now refuses together), and
 * returns its secret. */
export async function legacyToken(
  store: TokenStore,
  name: string,
  roles: Role[],
  groups: string[] = [],
): Promise<string> {
  const token = newTokenSecret();
  const id = `tok_legacy_${name}`;
  await store.put({ id, name, roles, groups, createdAt: Date.now() }, hashToken(token));
  return token;
}
