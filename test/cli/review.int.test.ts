// `airlock review` driven through piped stdin, as an operator at a terminal would.
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAirlock } from "../../src/engine/engine.js";
import { sqliteStore } from "../../src/store/sqlite.js";
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

function review(args: string[], input: string | undefined, keepOpenMs = 0) {
  return runCli(
    ["review", ...args],
    { ...process.env, AIRLOCK_DB: db, AIRLOCK_URL: "" },
    {
      ...(input === undefined ? {} : { input }),
      keepOpenMs,
    },
  );
}

async function seed(titles: string[]) {
  const engine = await createAirlock({ store: sqliteStore(db) });
  const ids: string[] = [];
  for (const title of titles) {
    const r = await engine.request({
      title,
      requester: "planner",
      correlationId: `corr-${title}`,
      items: ["Move to Safe_Pos_1", "Tack Weld at Pos_1"],
      metadata: { operator_input: `weld ${title}` },
    });
    ids.push(r.id);
  }
  await engine.close();
  return ids;
}

async function statuses(ids: string[]) {
  const engine = await createAirlock({ store: sqliteStore(db) });
  const out = [];
  for (const id of ids) out.push(await engine.get(id));
  await engine.close();
  return out;
}

describe("airlock review", () => {
  it("approve, revise with a comment, decline, invalid-then-approve", async () => {
    const ids = await seed(["one", "two", "three", "four"]);
    const r = await review(
      ["--as", "alice", "--timeout", "20"],
      "a\nr\nskip position 2\nd\nx\na\n",
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("[a] Approve");
    expect(r.stdout).toContain("What changes do you want?");
    expect(r.stdout).toContain("No more pending requests to review.");
    const [one, two, three, four] = await statuses(ids);
    expect(one?.status).toBe("approved");
    expect(two?.status).toBe("revise");
    expect(two?.decision?.comment).toBe("skip position 2");
    expect(three?.status).toBe("rejected");
    expect(four?.status).toBe("approved");
    for (const req of [one, two, three, four]) {
      expect(req?.decision).toMatchObject({ reviewer: "alice", channel: "cli" });
    }
  });

  it("gives up when nobody answers in time and leaves the gate pending", async () => {
    const [id] = await seed(["quiet"]);
    const r = await review(["--as", "alice", "--timeout", "1"], undefined, 5_000);
    expect(r.code).toBe(2);
    const [req] = await statuses([id as string]);
    expect(req?.status).toBe("pending");
  });

  it("times out while the operator is typing a comment", async () => {
    const [id] = await seed(["typing"]);
    const r = await review(["--as", "alice", "--timeout", "1"], "r\n", 5_000);
    expect(r.code).toBe(2);
    expect(r.stdout).toContain("What changes do you want?");
    const [req] = await statuses([id as string]);
    expect(req?.status).toBe("pending");
  });
});
