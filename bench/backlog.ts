// A million pending gates: a database with 1,000,000 pending requests, 5,000,000 decided ones and
// 20,000,000 audit events (`AIRLOCK_BENCH_SCALE` scales all three; default 1), written in bulk with
// SQL in the stores' own schema (through the engine it would take hours), then served by a real
// `airlock serve` process and measured over HTTP (backlog-http.ts). A small database (1,000 pending)
// is served and measured the same way first, so the figures show what the backlog itself costs.
//
// The audit rows are well-formed but their hashes are not a real chain: verifying speed is
// measured by bench/audit.ts on a real chain. Everything lives in a temp folder and is removed.
import { statSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import Database from "better-sqlite3";
import { monotonicFactory } from "ulid";
import { sqliteStore } from "../src/store/sqlite.js";
import { SQLITE_FILL_OUTCOME_STATS } from "../src/store/sqlite-migrations.js";
import { markAllTitlesIndexed } from "../src/store/sqlite-title-index.js";
import { tempDir } from "../test/helpers.js";
import { measureServed, serve } from "./backlog-http.js";
import { generatePostgres } from "./backlog-postgres.js";
import type { Figure } from "./figures.js";
import { dropSchema, findDatabase } from "./postgres.js";

const SCALE = Number(process.env.AIRLOCK_BENCH_SCALE ?? 1);
const DAY = 24 * 3600 * 1000;

/** Words the titles are made of; searches ask for some of them. */
const VERBS = ["Deploy", "Refund", "Delete", "Email", "Sign", "Transfer", "Restart", "Publish"];
const OBJECTS = [
  "billing",
  "invoice",
  "customer",
  "contract",
  "cluster",
  "report",
  "robot",
  "search",
];
export const SEARCH_WORDS = [
  "billing",
  "refund",
  "contract 4",
  "robot-17",
  "invoice 12",
  "cluster",
];
const ACTIONS = ["deploy", "payments.refund", "files.delete", "email.send", "contracts.sign"];
const REQUESTERS = Array.from({ length: 200 }, (_, i) => `agent-${i}`);

/** Who may decide request `i`: half go to `bench-reviewers`, 49 % to one of seven teams
 * (`bench-team-0`…`6`, 7 % each), 1 % to `bench-few`. The bench measures a reviewer of the first
 * group (half the requests) and one of the last (one in a hundred). The group is drawn from a hash
 * of `i`, so that it says nothing of the title (whose words and numbers come from `i` too). The
 * PostgreSQL generator writes the same in SQL (its `approver` column). */
export function approversOf(i: number): string[] {
  const g = (Math.imul(i, 2654435761 | 0) >>> 0) % 100;
  return [g < 50 ? "bench-reviewers" : g === 99 ? "bench-few" : `bench-team-${g % 7}`];
}

export interface BacklogSize {
  pending: number;
  decided: number;
  events: number;
}

export function backlogSize(scale = SCALE): BacklogSize {
  return {
    pending: Math.round(1_000_000 * scale),
    decided: Math.round(5_000_000 * scale),
    events: Math.round(20_000_000 * scale),
  };
}

/** One generated request: its place in time and what happened to it. */
export interface Gen {
  id: string;
  i: number;
  title: string;
  action: string;
  requester: string;
  createdAt: number;
  pending: boolean;
  deadline: number | null;
  outcome: "approved" | "rejected" | "timed_out";
  decidedAt: number;
  events: number;
}

/** Requests in creation order: every sixth-ish pending (spread over history, as a real backlog is),
 * deadlines all in the future (an overdue backlog would be swept while we measure), each with 2–5
 * events so the total comes to `size.events`. */
export function* generate(size: BacklogSize, now: number): Generator<Gen> {
  const total = size.pending + size.decided;
  const span = 180 * DAY;
  const ulid = monotonicFactory(() => 0.5);
  const eventsPerRequest = size.events / Math.max(1, total);
  let eventsLeft = size.events;
  let pendingLeft = size.pending;
  for (let i = 0; i < total; i++) {
    const createdAt = now - span + Math.floor((span * i) / total);
    const left = total - i;
    const pending = pendingLeft > 0 && (pendingLeft >= left || (i * 7919) % total < size.pending);
    if (pending) pendingLeft--;
    const verb = VERBS[i % VERBS.length] as string;
    const object = OBJECTS[Math.floor(i / VERBS.length) % OBJECTS.length] as string;
    const n = Math.min(
      eventsLeft,
      Math.max(1, Math.round(eventsPerRequest * (i + 1)) - Math.round(eventsPerRequest * i)),
    );
    eventsLeft -= n;
    yield {
      id: `req_${ulid(createdAt).toLowerCase()}`,
      i,
      title: `${verb} ${object} ${i % 100}: ${object}-${i % 997} for ${REQUESTERS[i % 200]}`,
      action: ACTIONS[i % ACTIONS.length] as string,
      requester: REQUESTERS[i % REQUESTERS.length] as string,
      createdAt,
      pending,
      deadline: i % 10 === 0 ? null : now + DAY + (i % 60) * DAY,
      outcome: i % 11 === 0 ? "timed_out" : i % 5 === 0 ? "rejected" : "approved",
      decidedAt: createdAt + 60_000 + (i % 3600) * 1000,
      events: n,
    };
  }
}

/** The stored document of a generated request, shaped as the engine writes one. */
export function docOf(g: Gen): string {
  const base = {
    id: g.id,
    action: g.action,
    title: g.title,
    args: { target: `${g.action}-${g.i % 997}`, amount: g.i % 1000 },
    argsHash: "0".repeat(64),
    items: [{ id: "item-1", label: g.title }],
    allowed: ["approve", "reject", "revise", "select", "edit"],
    level: "full",
    requester: g.requester,
    approvers: approversOf(g.i),
    quorum: 1,
    onTimeout: "reject",
    escalations: 0,
    revisionCommentRequired: false,
    correlationId: g.id,
    metadata: {},
    inputHash: "0".repeat(64),
    createdAt: g.createdAt,
  };
  if (g.pending) {
    return JSON.stringify({
      ...base,
      status: "pending",
      decisions: [],
      updatedAt: g.createdAt,
      version: 1,
      ...(g.deadline === null ? {} : { deadline: g.deadline }),
    });
  }
  const decision =
    g.outcome === "timed_out"
      ? { outcome: "timed_out", method: "timeout", reviewer: "system", decidedAt: g.decidedAt }
      : {
          outcome: g.outcome,
          method: g.outcome === "approved" ? "approve_all" : "reject",
          reviewer: "alice",
          channel: "web",
          decidedAt: g.decidedAt,
        };
  return JSON.stringify({
    ...base,
    status: g.outcome,
    decisions: g.outcome === "timed_out" ? [] : [decision],
    decision,
    updatedAt: g.decidedAt,
    version: 2,
  });
}

/** The event types of a request's `n` events, in order. */
export function eventTypes(g: Gen): string[] {
  const types = ["created"];
  const last = g.pending ? [] : [g.outcome === "timed_out" ? "timed_out" : "decided"];
  while (types.length + last.length < g.events)
    types.push(types.length === 1 ? "notified" : "viewed");
  return [...types, ...last].slice(0, g.events);
}

/** Fills a new SQLite database; returns how long it took. */
export async function generateSqlite(
  path: string,
  size: BacklogSize,
  now: number,
): Promise<number> {
  const start = performance.now();
  const store = sqliteStore(path);
  await store.migrate();
  await store.close();
  const db = new Database(path);
  try {
    db.pragma("synchronous = OFF");
    db.pragma("cache_size = -262144");
    // Indexes are dropped while the rows go in and made again after (one sort each instead of
    // millions of scattered inserts); their SQL is taken from the schema itself. The title index
    // takes no row meanwhile (they are all past its mark: sqlite-title-index.ts); it is rebuilt after.
    const saved = db
      .prepare<[], { type: string; name: string; sql: string }>(
        `SELECT type, name, sql FROM sqlite_master
         WHERE sql IS NOT NULL AND type = 'index' AND tbl_name IN ('requests', 'audit')`,
      )
      .all();
    for (const s of saved) db.exec(`DROP ${s.type.toUpperCase()} ${s.name}`);

    const insertRequest = db.prepare(
      `INSERT INTO requests (id, key, action, title, title_lower, status, risk, confidence, level, requester,
         approvers, quorum, deadline, created_at, updated_at, correlation_id, revision_of, item_count,
         outcome, method, reviewer, decided_at, version, doc_bytes, doc)
       VALUES (?, NULL, ?, ?, ?, ?, ?, NULL, 'full', ?, ?, 1, ?, ?, ?, ?, NULL, 1, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const insertEvent = db.prepare(
      "INSERT INTO audit (seq, request_id, type, actor, at, data, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    );
    const hash = "f".repeat(64);
    let seq = 0;
    let batch: Gen[] = [];
    const flush = db.transaction((rows: Gen[]) => {
      for (const g of rows) {
        const doc = docOf(g);
        const status = g.pending ? "pending" : g.outcome;
        const decided = !g.pending;
        insertRequest.run(
          g.id,
          g.action,
          g.title,
          g.title.toLowerCase(),
          status,
          g.i % 4 === 0 ? "high" : "low",
          g.requester,
          JSON.stringify(approversOf(g.i)),
          g.pending ? g.deadline : null,
          g.createdAt,
          decided ? g.decidedAt : g.createdAt,
          g.id,
          decided ? g.outcome : null,
          decided
            ? g.outcome === "timed_out"
              ? "timeout"
              : g.outcome === "approved"
                ? "approve_all"
                : "reject"
            : null,
          decided ? (g.outcome === "timed_out" ? "system" : "alice") : null,
          decided ? g.decidedAt : null,
          decided ? 2 : 1,
          Buffer.byteLength(doc),
          doc,
        );
        for (const type of eventTypes(g)) {
          seq++;
          const at = type === "decided" || type === "timed_out" ? g.decidedAt : g.createdAt;
          const data =
            type === "created"
              ? `{"title":${JSON.stringify(g.title)},"action":"${g.action}"}`
              : "{}";
          insertEvent.run(
            seq,
            g.id,
            type,
            type === "decided" ? "alice" : g.requester,
            at,
            data,
            hash,
            hash,
          );
        }
      }
    });
    for (const g of generate(size, now)) {
      batch.push(g);
      if (batch.length === 20_000) {
        flush(batch);
        batch = [];
      }
    }
    flush(batch);
    db.prepare("UPDATE audit_head SET seq = ?, hash = ? WHERE id = 1").run(seq, hash);
    for (const s of saved) db.exec(s.sql);
    db.exec("INSERT INTO requests_title (requests_title) VALUES ('rebuild')");
    markAllTitlesIndexed(db);
    db.exec(SQLITE_FILL_OUTCOME_STATS);
    db.exec("ANALYZE");
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
  return performance.now() - start;
}

/** A free port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      s.close(() => (typeof a === "object" && a ? resolve(a.port) : reject(new Error("no port"))));
    });
  });
}

async function servedFigures(prefix: string, env: Record<string, string>): Promise<Figure[]> {
  const s = await serve([], await freePort(), env);
  try {
    return await measureServed(prefix, s, SEARCH_WORDS);
  } finally {
    await s.stop();
  }
}

/** The same on PostgreSQL, in a schema of its own (dropped after); none when none is reachable. */
async function backlogPostgres(size: BacklogSize, now: number): Promise<Figure[]> {
  const url = await findDatabase("backlog");
  if (!url) return [];
  const schema = `airlock_backlog_${process.pid}`;
  try {
    const ms = await generatePostgres(url, schema, size, now);
    return [
      { name: "backlog.postgres.generate_s", value: ms / 1000, unit: "s" },
      ...(await servedFigures("backlog.postgres", {
        AIRLOCK_DATABASE_URL: url,
        AIRLOCK_POSTGRES_SCHEMA: schema,
      })),
    ];
  } finally {
    await dropSchema(url, schema);
  }
}

export async function benchBacklog(): Promise<Figure[]> {
  const t = tempDir("airlock-bench-backlog-");
  try {
    const out: Figure[] = [];
    const now = Date.now();
    const small = join(t.dir, "small.db");
    await generateSqlite(small, { pending: 1000, decided: 5000, events: 20_000 }, now);
    out.push(...(await servedFigures("backlog.sqlite_small", { AIRLOCK_DB: small })));

    const size = backlogSize();
    const big = join(t.dir, "big.db");
    const ms = await generateSqlite(big, size, now);
    out.push(
      { name: "backlog.sqlite.pending", value: size.pending, unit: "requests" },
      { name: "backlog.sqlite.decided", value: size.decided, unit: "requests" },
      { name: "backlog.sqlite.events", value: size.events, unit: "events" },
      { name: "backlog.sqlite.generate_s", value: ms / 1000, unit: "s" },
      { name: "backlog.sqlite.db_mb", value: statSync(big).size / 2 ** 20, unit: "MB" },
    );
    out.push(...(await servedFigures("backlog.sqlite", { AIRLOCK_DB: big })));
    t.cleanup();
    out.push(...(await backlogPostgres(size, now)));
    return out;
  } finally {
    t.cleanup();
  }
}
