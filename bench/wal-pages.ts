// Where the SQLite round trip's WAL pages and statements go (not a suite: a tool for the schema's
// work, `node --import tsx bench/wal-pages.ts [rounds] [pending]`). The WAL only grows (no checkpoint), so
// each frame written during the measured round trips is read back from the file: its page number,
// then the table or index that page belongs to (the dbstat virtual table), summed per round trip.
// The store's statements are recorded as the replay records them, counted per round trip by text.
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import type Database from "better-sqlite3";
import type { Airlock } from "../src/engine/engine.js";
import { tempDir } from "../test/helpers.js";
import { gateRoundTrip, loopsInFlight } from "./round-trip.js";
import { engineOnDatabase } from "./sqlite-replay.js";

const WAL_HEADER = 32;
const FRAME_HEADER = 24;

interface Frame {
  page: number;
  /** Non-zero on a commit's last frame: the database's size in pages after it. */
  commitSize: number;
}

function framesSince(walPath: string, from: number, pageSize: number): Frame[] {
  const size = statSync(walPath).size;
  const fd = openSync(walPath, "r");
  const frames: Frame[] = [];
  const header = Buffer.alloc(FRAME_HEADER);
  try {
    for (let off = from; off + FRAME_HEADER + pageSize <= size; off += FRAME_HEADER + pageSize) {
      readSync(fd, header, 0, FRAME_HEADER, off);
      frames.push({ page: header.readUInt32BE(0), commitSize: header.readUInt32BE(4) });
    }
  } finally {
    closeSync(fd);
  }
  return frames;
}

function ownerOfPages(db: Database.Database): Map<number, string> {
  const rows = db
    .prepare<[], { name: string; pageno: number; pagetype: string }>(
      "SELECT name, pageno, pagetype FROM dbstat",
    )
    .all();
  return new Map(
    rows.map((r) => [r.pageno, r.pagetype === "leaf" ? r.name : `${r.name} (${r.pagetype})`]),
  );
}

type Method = "run" | "get" | "all" | "iterate";

function recordStatements(db: Database.Database, counts: Map<string, number>): () => void {
  const proto = Object.getPrototypeOf(db.prepare("SELECT 1")) as Record<
    Method,
    (...args: unknown[]) => unknown
  >;
  const methods: Method[] = ["run", "get", "all", "iterate"];
  const originals = methods.map((m) => [m, proto[m]] as const);
  for (const [method, original] of originals) {
    proto[method] = function (this: Database.Statement, ...args: unknown[]) {
      if (this.database === db) {
        const key = this.source.replace(/\s+/g, " ").slice(0, 110);
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      return original.apply(this, args);
    };
  }
  return () => {
    for (const [method, original] of originals) proto[method] = original;
  };
}

/** gateRoundTrip (round-trip.ts) with a mark after each step. */
async function steppedRoundTrip(engine: Airlock, mark: (step: string) => void): Promise<void> {
  const r = await engine.request({
    title: "bench",
    requester: "agent",
    items: ["a", "b"],
    timeoutMs: 600_000,
  });
  mark("create");
  const waiting = engine.waitFor(r.id);
  await engine.decide(r.id, { outcome: "approved", reviewer: "alice", selected: ["item-2"] });
  const done = await waiting;
  if (done.status !== "approved") throw new Error("the gate did not resume approved");
  mark("decide");
  const claimed = await engine.claimExecution(r.id, { by: "agent" });
  if (claimed.execution?.state !== "claimed") throw new Error("the execution was not claimed");
  mark("claim");
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 300);
  // Gates left pending before the measured round trips (never decided), as a busy inbox has: the
  // pending rows' index entries then lie apart from the decided ones'.
  const pending = Number(process.argv[3] ?? 0);
  const t = tempDir("airlock-walpages-");
  try {
    const path = join(t.dir, "pages.db");
    const { engine, db } = await engineOnDatabase(path, (d) => {
      d.pragma("wal_autocheckpoint = 0");
    });
    const pageSize = db.pragma("page_size", { simple: true }) as number;
    try {
      if (pending > 0) {
        await loopsInFlight(Math.min(64, pending), pending, 600_000, () =>
          engine.request({
            title: "waiting",
            requester: "other",
            items: ["a"],
            timeoutMs: 3_600_000,
          }),
        );
      }
      for (let i = 0; i < 50; i++) await gateRoundTrip(engine);
      const from = statSync(`${path}-wal`).size;
      const counts = new Map<string, number>();
      const stop = recordStatements(db, counts);
      // The WAL's size after each step of each round trip: which step wrote which frames.
      const marks: { step: string; at: number }[] = [];
      const mark = (step: string) => marks.push({ step, at: statSync(`${path}-wal`).size });
      try {
        for (let i = 0; i < rounds; i++) await steppedRoundTrip(engine, mark);
      } finally {
        stop();
      }
      const frames = framesSince(`${path}-wal`, Math.max(from, WAL_HEADER), pageSize);
      const owners = ownerOfPages(db);
      const byOwner = new Map<string, number>();
      const frameSize = FRAME_HEADER + pageSize;
      let m = 0;
      let prevAt = Math.max(from, WAL_HEADER);
      frames.forEach((f, i) => {
        const off = Math.max(from, WAL_HEADER) + i * frameSize;
        while (m < marks.length && (marks[m]?.at ?? 0) <= off) prevAt = marks[m++]?.at ?? prevAt;
        const step = marks[m]?.step ?? "?";
        const o = f.page === 1 ? "(page 1: header)" : (owners.get(f.page) ?? "(free or gone)");
        const key = `${step.padEnd(7)} ${o}`;
        byOwner.set(key, (byOwner.get(key) ?? 0) + 1);
      });
      const commits = frames.filter((f) => f.commitSize > 0).length;
      const statements = [...counts.values()].reduce((a, b) => a + b, 0);
      const out = (s: string) => process.stdout.write(`${s}\n`);
      out(`wal_pages_per_roundtrip ${(frames.length / rounds).toFixed(2)}`);
      out(`commits_per_roundtrip ${(commits / rounds).toFixed(2)}`);
      out(`sql_statements_per_roundtrip ${(statements / rounds).toFixed(2)}`);
      out("pages by object:");
      for (const [o, n] of [...byOwner].sort((a, b) => a[0].localeCompare(b[0]))) {
        out(`  ${(n / rounds).toFixed(2).padStart(6)}  ${o}`);
      }
      out("statements:");
      for (const [s, n] of [...counts].sort((a, b) => b[1] - a[1])) {
        out(`  ${(n / rounds).toFixed(2).padStart(6)}  ${s}`);
      }
    } finally {
      await engine.close();
    }
  } finally {
    t.cleanup();
  }
}

await main();
