// A real server on an ephemeral loopback port with only the tokens a test names (helpers.ts makes a
// fixed set): for tests that need a principal of their own.
import { join } from "node:path";
import pino from "pino";
import type { Store } from "../../src/core/store.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { createServer } from "../../src/server/server.js";
import {
  createToken,
  memoryTokenStore,
  type Role,
  type TokenStore,
} from "../../src/server/tokens.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";
import { call, type Reply } from "./helpers.js";

export interface OwnServer {
  url: string;
  airlock: Airlock;
  tokenStore: TokenStore;
  /** The secret of each token named in `startOwnServer`. */
  tokens: Record<string, string>;
  call(token: string | undefined, method: string, path: string, body?: unknown): Promise<Reply>;
  close(): Promise<void>;
}

export async function startOwnServer(
  people: Record<string, { roles: Role[]; groups?: string[] }>,
  store?: Store,
): Promise<OwnServer> {
  const t = tempDir("airlock-own-server-");
  const airlock = await createAirlock({
    store: store ?? sqliteStore(join(t.dir, "airlock.db")),
    logger: pino({ level: "silent" }),
  });
  const tokenStore = memoryTokenStore();
  const tokens: Record<string, string> = {};
  for (const [name, p] of Object.entries(people)) {
    tokens[name] = (
      await createToken(tokenStore, { name, roles: p.roles, groups: p.groups ?? [] })
    ).token;
  }
  const server = createServer({ rateLimit: false, airlock, auth: { tokens: tokenStore } });
  const { url } = await server.listen({ port: 0, host: "127.0.0.1" });
  return {
    url,
    airlock,
    tokenStore,
    tokens,
    call: (token, method, path, body) => call(url, token, method, path, body),
    async close() {
      await server.close();
      await airlock.close();
      t.cleanup();
    },
  };
}
