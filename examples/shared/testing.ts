// Helpers for the examples' end-to-end tests: a real engine on an in-memory SQLite store, and a way
// to find the next request an agent is waiting on.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Policy } from "../../src/core/policy.js";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import type { Gate } from "./gate.js";

export function testEngine(policy?: Policy): Promise<Airlock> {
  return createAirlock({ store: sqliteStore(":memory:"), ...(policy ? { policy } : {}) });
}

/** The oldest pending request (optionally of one action) not in `seen`; waits for it to appear. The
 * returned request is added to `seen`, so calling again gives the next one. */
export async function nextPending(
  gate: Gate,
  opts: { action?: string; seen?: Set<string>; timeoutMs?: number } = {},
): Promise<ApprovalRequest> {
  const until = Date.now() + (opts.timeoutMs ?? 5000);
  const seen = opts.seen ?? new Set<string>();
  for (;;) {
    const page = await gate.list({
      status: "pending",
      ...(opts.action ? { action: opts.action } : {}),
    });
    const fresh = page.items.filter((r) => !seen.has(r.id)).sort((a, b) => (a.id < b.id ? -1 : 1));
    const first = fresh[0];
    if (first) {
      seen.add(first.id);
      return first;
    }
    if (Date.now() > until) {
      throw new Error(`no new pending request${opts.action ? ` for ${opts.action}` : ""} appeared`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Lines written through a `log` callback. */
export function captureLog(): { log: (line: string) => void; lines: string[] } {
  const lines: string[] = [];
  return { log: (line) => lines.push(line), lines };
}

/** A fresh temporary folder, removed by `cleanup`. */
export function tempDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
