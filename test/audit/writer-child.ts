// A second process appending to a store's audit log as the engine does (a created request, then its
// decision), as fast as it can, until told to stop. Env: STORE=sqlite DB=<file>, or STORE=postgres
// PG_URL=<url> PG_SCHEMA=<schema>; AUDIT_KEY optional.

import type { Store } from "../../src/core/store.js";
import { postgresStore } from "../../src/store/postgres.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { failWith, tell } from "../postgres/child.js";
import { createAndDecide } from "./fixtures.js";

async function main() {
  const key = process.env.AUDIT_KEY;
  const store: Store =
    process.env.STORE === "postgres"
      ? postgresStore(process.env.PG_URL ?? "", { schema: process.env.PG_SCHEMA, auditKey: key })
      : sqliteStore(process.env.DB ?? "", { auditKey: key });
  await store.migrate();
  let stopping = false;
  process.on("message", (m: { type?: string }) => {
    if (m.type === "stop") stopping = true;
  });
  process.on("SIGTERM", () => {
    stopping = true;
  });
  let n = 0;
  const tag = `${process.pid}-${Date.now()}`;
  while (!stopping) {
    const id = `req_w${tag}_${String(n).padStart(6, "0")}`;
    await createAndDecide(store, id, n % 2 ? "approved" : "rejected");
    n++;
    if (n === 5) tell({ type: "ready" });
    // Let the parent's messages in.
    if (n % 20 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  await store.close();
  tell({ type: "done", written: n });
}

main().catch(failWith);
