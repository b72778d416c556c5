// Ticket takes racing in separate processes on one SQLite file: one connection per process, so the
// takes really overlap (in one process better-sqlite3 runs each to its end). Each process takes a new
// key and a key whose lease ran out; of each key exactly one process gets it.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, expect, it } from "vitest";
import type { TicketTakeResult } from "../../src/core/store.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { scriptArgs, tempDir } from "../helpers.js";

const child = fileURLToPath(new URL("./ticket-race-child.ts", import.meta.url));
const PROCESSES = 4;
const T0 = 1_700_000_000_000;

const procs: ChildProcessWithoutNullStreams[] = [];
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const p of procs.splice(0)) if (p.exitCode === null) p.kill("SIGKILL");
  for (const c of cleanups.splice(0)) c();
});

/** Starts a racer; resolves with it once it said `ready`, and with its answers once it printed them. */
function racer(args: string[]) {
  const proc = spawn(process.execPath, [...scriptArgs(child), ...args]);
  procs.push(proc);
  let out = "";
  let err = "";
  proc.stderr.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const lines: string[] = [];
  const seen = (want: (l: string) => boolean) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const line = lines.find(want);
        if (line !== undefined) resolve(line);
      };
      proc.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        const parts = out.split("\n");
        out = parts.pop() ?? "";
        lines.push(...parts);
        check();
      });
      proc.on("exit", (code) => reject(new Error(`racer exited (${code}): ${err}`)));
      check();
    });
  const ready = seen((l) => l === "ready");
  const answers = seen((l) => l.startsWith("[")).then((l) => JSON.parse(l) as TicketTakeResult[]);
  return { proc, ready, answers };
}

it("separate processes taking the same tickets at once: exactly one gets each", async () => {
  const t = tempDir("airlock-ticket-race-");
  cleanups.push(t.cleanup);
  const file = join(t.dir, "airlock.db");
  // The file, migrated, with a ticket whose holder died (its lease ended at T0 + 1000).
  const store = sqliteStore(file);
  await store.migrate();
  await store.takeTicket?.({ scope: "bot", key: "dead", holder: "dead#0", now: T0, leaseMs: 1000 });
  await store.close();

  const now = String(T0 + 5000);
  const racers = Array.from({ length: PROCESSES }, (_, i) =>
    racer([file, `racer-${i}#p`, now, "fresh", "dead"]),
  );
  await Promise.all(racers.map((r) => r.ready));
  for (const r of racers) r.proc.stdin.write("go\n");
  const answers = await Promise.all(racers.map((r) => r.answers));

  for (const [k, key] of ["fresh", "dead"].entries()) {
    const got = answers.map((a) => a[k] as TicketTakeResult);
    const winners = got.flatMap((a, i) => (a.taken ? [`racer-${i}#p`] : []));
    expect(winners, key).toHaveLength(1);
    for (const a of got) if (!a.taken) expect(a.holder, key).toBe(winners[0]);
  }
}, 60_000);
