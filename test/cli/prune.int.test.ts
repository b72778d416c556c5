// `airlock prune --before DATE` and `airlock audit verify` as a user runs them, on a SQLite file
// keyed by the key file the command line keeps beside it.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/cli/context.js";
import { createAndDecide, request } from "../audit/fixtures.js";
import { tempDir } from "../helpers.js";
import { runCli } from "./run-cli.js";

let db: string;
let cleanup: () => void;
beforeEach(() => {
  const t = tempDir();
  cleanup = t.cleanup;
  db = join(t.dir, "airlock.db");
});
afterEach(() => cleanup());

function env(): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, AIRLOCK_DB: db };
  delete e.AIRLOCK_URL;
  delete e.AIRLOCK_AUDIT_KEY;
  delete e.AIRLOCK_AUDIT_KEY_FILE;
  delete e.AIRLOCK_CHECKPOINT_FILE;
  return e;
}
const airlock = (...args: string[]) => runCli(args, env());

/** Three requests decided in 2023 (events 1–6), then one still pending (event 7). */
async function seed() {
  const store = openSqliteStore(db);
  try {
    for (let i = 0; i < 3; i++) await createAndDecide(store, `req_old${i}`, "approved");
    const p = request("req_pending");
    await store.insertRequest(p, [
      { type: "created", requestId: p.id, actor: p.requester, at: p.createdAt, data: {} },
    ]);
  } finally {
    await store.close();
  }
}

describe("airlock prune", () => {
  it("prints one line, keeps the pending request, and the log still verifies", async () => {
    await seed();
    const pruned = await airlock("prune", "--before", "2026-01-01");
    expect(pruned.stderr).toBe("");
    expect(pruned.code).toBe(0);
    expect(pruned.stdout).toBe(
      "pruned 3 requests, 6 audit events and 0 outbox messages last changed before 2026-01-01T00:00:00.000Z; the audit log now starts after event #6\n",
    );
    const again = await airlock("prune", "--before", "2026-01-01");
    expect(again.stdout).toMatch(/^pruned 0 requests, 0 audit events .*after event #6\n$/);

    // The pending request's event #7, and #8: the prune took the log's start, so the store (with its
    // checkpoint file) records again that checkpoints are written.
    const full = await airlock("audit", "verify");
    expect(full.stdout).toBe(
      "audit chain intact: 2 events checked after event #6 (the prune anchor)\n",
    );
    const resumed = await airlock("audit", "verify", "--from-checkpoint");
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toMatch(
      /^audit chain intact: 0 events checked after event #8 \(verified before/,
    );

    // The anchor deleted by hand: verification fails (exit 1).
    const d = new Database(db);
    d.prepare("DELETE FROM audit_marks").run();
    d.close();
    const broken = await airlock("audit", "verify", "--from-checkpoint");
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/^audit chain broken at event #7: expected event #1/);
  });

  it.each([["2026-13-01"], ["2026-02-30"], ["yesterday"], ["2026-01-01T00:00:00"]])(
    "refuses --before %s with one line on stderr",
    async (value) => {
      await seed();
      const r = await airlock("prune", "--before", value);
      expect(r.code).not.toBe(0);
      expect(r.stdout).toBe("");
      expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain("--before");
      // Nothing was deleted.
      const d = new Database(db, { readonly: true });
      const n = (d.prepare("SELECT COUNT(*) AS n FROM requests").get() as { n: number }).n;
      d.close();
      expect(n).toBe(4);
    },
  );
});

describe("airlock audit verify --threads", () => {
  it("names the same first bad event with hashing threads and without", async () => {
    await seed();
    for (const threads of ["0", "2"]) {
      const ok = await airlock("audit", "verify", "--threads", threads);
      expect(ok.code).toBe(0);
      expect(ok.stdout).toBe("audit chain intact: 7 events\n");
    }
    const d = new Database(db);
    d.prepare('UPDATE audit SET data = \'{"title":"edited"}\' WHERE seq = 3').run();
    d.close();
    const alone = await airlock("audit", "verify", "--threads", "0");
    const threaded = await airlock("audit", "verify", "--threads", "2");
    expect(alone.code).toBe(1);
    expect(alone.stderr).toBe(
      "audit chain broken at event #3: event #3 was altered: its content does not match its hash\n",
    );
    expect(threaded).toEqual(alone);
  });

  it.each([["-1"], ["1.5"], ["many"], [""], ["17"]])(
    "refuses --threads %s with one line on stderr",
    async (value) => {
      await seed();
      const r = await airlock("audit", "verify", "--threads", value);
      expect(r.code).not.toBe(0);
      expect(r.stdout).toBe("");
      expect(r.stderr).toBe(
        `airlock: --threads expects a whole number from 0 to 16, got \`${value}\`\n`,
      );
    },
  );
});
