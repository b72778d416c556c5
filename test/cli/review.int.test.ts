// `airlock review` driven through piped stdin, as an operator at a terminal would.
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAirlock } from "../../src/engine/engine.js";
import { sqliteStore } from "../../src/store/sqlite.js";
import { tempDir } from "../helpers.js";
import { startTestServer, type TestServer } from "../server/helpers.js";
import { runCli } from "./run-cli.js";

let db: string;
let dir: string;
let cleanup: () => void;
beforeEach(() => {
  const t = tempDir();
  cleanup = t.cleanup;
  dir = t.dir;
  db = join(t.dir, "airlock.db");
});
const tempDirOf = () => dir;
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
    // stdin stays open (as a terminal's would) however long the command takes to start: it ends by
    // its own timeout, not because its input closed.
    const r = await review(["--as", "alice", "--timeout", "1"], undefined, 60_000);
    expect(r.code).toBe(2);
    const [req] = await statuses([id as string]);
    expect(req?.status).toBe("pending");
  });

  it("times out while the operator is typing a comment", async () => {
    const [id] = await seed(["typing"]);
    const r = await review(["--as", "alice", "--timeout", "1"], "r\n", 60_000);
    expect(r.code).toBe(2);
    expect(r.stdout).toContain("What changes do you want?");
    const [req] = await statuses([id as string]);
    expect(req?.status).toBe("pending");
  });
});

// `airlock review --url --token`: the same console through a real server on loopback. The queue is
// what the token may see, the view and its digest are the server's, and decisions are recorded as
// the token's holder, never the user running the command.
describe("airlock review through a server", () => {
  let s: TestServer;
  beforeEach(async () => {
    s = await startTestServer();
  });
  afterEach(async () => {
    await s.close();
  });

  const remote = (
    args: string[],
    input: string | undefined,
    env: NodeJS.ProcessEnv = {},
    keepOpenMs = 0,
  ) =>
    runCli(
      ["review", ...args],
      {
        ...process.env,
        AIRLOCK_URL: "",
        AIRLOCK_TOKEN: "",
        AIRLOCK_DB: join(tempDirOf(), "unused.db"),
        USER: "os-user",
        AIRLOCK_USER: "os-user",
        NO_COLOR: "1",
        ...env,
      },
      { ...(input === undefined ? {} : { input }), keepOpenMs },
    );

  it("shows the server's view, selects items, confirms a critical approval, records the token's reviewer", async () => {
    const plan = await s.airlock.request({
      title: "Research queries",
      action: "research.plan",
      items: ["query one", "query two", "query three"],
      labels: { itemNoun: "queries" },
      requester: "bot",
      approvers: ["ops"],
    });
    const drop = await s.airlock.request({
      title: "Drop table legacy_sessions",
      action: "db.drop_table",
      risk: "critical",
      summary: "Unused since 2023.",
      args: { sql: "DROP TABLE legacy_sessions" },
      requester: "bot",
      approvers: ["ops"],
    });
    const digests = await Promise.all(
      [plan, drop].map(
        async (r) =>
          (await s.call(s.tokens.alice, "GET", `/v1/requests/${r.id}/view`)).body.viewDigest,
      ),
    );
    const r = await remote(
      ["--url", s.url, "--token", s.tokens.alice, "--timeout", "20"],
      // plan: choose 3 and 1; drop: approve, refuse to confirm once, then approve and confirm.
      "s\n3,1\na\nno\na\nyes\n",
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("REVIEW OF 3 QUERIES · research.plan");
    expect(r.stdout).toContain("APPROVAL REQUESTED · db.drop_table");
    expect(r.stdout).not.toContain("PLAN REVIEW REQUIRED");
    expect(r.stdout).toContain("Risk: CRITICAL (the agent's own label)");
    expect(r.stdout).toContain(
      "The agent says (its own words, not checked by Airlock):\n  Unused since 2023.",
    );
    expect(r.stdout).toContain('"sql": "DROP TABLE legacy_sessions"');
    expect(r.stdout).toContain("This asks to confirm first: critical risk (the agent's own label)");
    expect(r.stdout).toContain("Not approved.");
    expect(r.stdout).toContain("No more pending requests to review.");
    // NO_COLOR: no escapes at all.
    expect(r.stdout).not.toContain("\u001b");

    const [p, d] = [await s.airlock.get(plan.id), await s.airlock.get(drop.id)];
    expect(p.status).toBe("approved");
    expect(p.decision).toMatchObject({
      reviewer: "alice",
      selected: ["item-1", "item-3"],
      viewDigest: digests[0],
    });
    expect(d.status).toBe("approved");
    expect(d.decision).toMatchObject({ reviewer: "alice", viewDigest: digests[1] });
    for (const x of [p, d]) expect(x.decision?.reviewer).not.toBe("os-user");
  });

  it("marks a revision with what changed, through AIRLOCK_URL and AIRLOCK_TOKEN", async () => {
    const first = await s.airlock.request({
      title: "Pay invoice 42",
      action: "invoice.pay",
      args: { amount: 480, to: "ACME" },
      requester: "bot",
      approvers: ["ops"],
    });
    await s.call(s.tokens.alice, "POST", `/v1/requests/${first.id}/decisions`, {
      outcome: "revise",
      comment: "pay 400, as agreed",
    });
    const second = await s.airlock.request({
      title: "Pay invoice 42",
      action: "invoice.pay",
      args: { amount: 400, to: "ACME" },
      requester: "bot",
      approvers: ["ops"],
      revisionOf: first.id,
    });
    const r = await remote(["--timeout", "20"], "d\n", {
      AIRLOCK_URL: s.url,
      AIRLOCK_TOKEN: s.tokens.ops2,
    });
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain(`REVISION of ${first.id}; asked for: “pay 400, as agreed”`);
    expect(r.stdout).toContain("What changed since the previous version: arguments.");
    expect(r.stdout).toContain('  -  "amount": 480,\n  +  "amount": 400,');
    const after = await s.airlock.get(second.id);
    expect(after.status).toBe("rejected");
    expect(after.decision).toMatchObject({ reviewer: "olga" });
  });

  it("an agent's token gets the server's refusal in one line, exit 4, and nothing is decided", async () => {
    const mine = await s.airlock.request({ title: "Deploy", requester: "bot" });
    const r = await remote(["--url", s.url, "--token", s.tokens.agent, "--timeout", "20"], "a\n");
    expect(r.code).toBe(4);
    // Piped input is not echoed, so the answer follows the prompt on its line.
    const refusal = r.stdout.split("\n").filter((l) => l.includes("Refused by the server: "));
    expect(refusal).toEqual([
      "Your decision [a/r/d]: Refused by the server: this route needs the role reviewer or admin; the token of bot has agent",
    ]);
    expect((await s.airlock.get(mine.id)).status).toBe("pending");
  });

  it("a requester is refused its own request in one line and goes on; a non-approver sees nothing", async () => {
    const own = await s.airlock.request({
      title: "My own change",
      requester: "alice",
      approvers: ["ops"],
    });
    const other = await s.airlock.request({
      title: "Ops change",
      requester: "bot",
      approvers: ["ops"],
    });
    const forFinance = await s.airlock.request({
      title: "Finance change",
      requester: "bot",
      approvers: ["finance"],
    });
    const r = await remote(
      ["--url", s.url, "--token", s.tokens.alice, "--timeout", "20"],
      "a\na\n",
    );
    expect(r.code).toBe(0);
    const notRecorded = r.stdout.split("\n").filter((l) => l.includes("Not recorded: "));
    expect(notRecorded).toHaveLength(1);
    expect(notRecorded[0]).toMatch(/alice requested .* and cannot decide it/);
    expect(r.stdout).not.toContain("Finance change");
    expect((await s.airlock.get(own.id)).status).toBe("pending");
    expect((await s.airlock.get(other.id)).decision?.reviewer).toBe("alice");

    // bob (finance) is not an approver of the ops request: the server does not list it to him.
    await s.airlock.cancel(forFinance.id, { reason: "not needed" });
    const bob = await remote(["--url", s.url, "--token", s.tokens.bob, "--timeout", "20"], "");
    expect(bob.code).toBe(0);
    expect(bob.stdout).toBe("No pending requests to review.\n");
    expect((await s.airlock.get(own.id)).status).toBe("pending");
  });

  it("refuses --as and --group with a server, and --url without a token, in one line", async () => {
    const as = await remote(["--url", s.url, "--token", s.tokens.alice, "--as", "mallory"], "");
    expect(as.code).toBe(4);
    expect(as.stderr.trim().split("\n")).toHaveLength(1);
    expect(as.stderr).toContain("--as is for the local database");
    const noToken = await remote(["--url", s.url], "");
    expect(noToken.code).toBe(4);
    expect(noToken.stderr).toContain("--token or AIRLOCK_TOKEN");
    const badToken = await remote(["--url", s.url, "--token", "alt_not-a-token"], "");
    expect(badToken.code).toBe(4);
    expect(badToken.stderr.trim().split("\n")).toHaveLength(1);
    expect(badToken.stderr).toContain("the server refused the token");
    expect(badToken.stdout).toBe("");
  });
});
