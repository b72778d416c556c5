// The resumers against a real server on 127.0.0.1 with an AGENT token (not admin): the resume ticket
// is taken through POST /v1/tickets, which an agent may call (scoped to the token's principal), and
// is no request. The decision is made with a reviewer token.
import { join } from "node:path";
import { MemorySaver } from "@langchain/langgraph";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  isGateInterrupt,
  type Resumer,
  resumeOnDecision,
  resumeThread,
} from "../../../src/adapters/langgraph.js";
import { createClient } from "../../../src/index.js";
import { tempDir } from "../../helpers.js";
import { startTestServer, type TestServer } from "../../server/helpers.js";
import { buildGraph, count, threadConfig } from "./fixture.js";

let srv: TestServer;
let dir: string;
let cleanup: () => void;
let log: string;
const resumers: Resumer[] = [];

beforeEach(async () => {
  srv = await startTestServer();
  ({ dir, cleanup } = tempDir("airlock-langgraph-http-"));
  log = join(dir, "effects.log");
});
afterEach(async () => {
  for (const r of resumers.splice(0)) await r.stop();
  await srv.close();
  cleanup();
});

async function parked(thread: string) {
  const airlock = createClient({ url: srv.url, token: srv.tokens.agent, pollMs: 50 });
  const { graph } = buildGraph({ airlock, checkpointer: new MemorySaver(), log, requester: "bot" });
  const out = (await graph.invoke(
    { messages: [{ role: "user", content: "write notes" }] },
    threadConfig(thread),
  )) as { __interrupt__?: Array<{ value: unknown }> };
  const value = out.__interrupt__?.[0]?.value;
  if (!isGateInterrupt(value)) throw new Error(`the graph did not park: ${JSON.stringify(out)}`);
  return { airlock, graph, id: value.airlock.requestId };
}

describe("airlock/langgraph over HTTP with an agent token", () => {
  it("two resumers resume the parked thread once after a reviewer's decision", async () => {
    const { airlock, graph, id } = await parked("h1");
    const resumed: string[] = [];
    const errors: unknown[] = [];
    let wake: (() => void) | undefined;
    for (const by of ["a", "b"]) {
      const r = resumeOnDecision({
        graph,
        airlock,
        by,
        pollMs: 50,
        onResumed: () => {
          resumed.push(by);
          wake?.();
        },
        onError: (err) => errors.push(err),
      });
      resumers.push(r);
      await r.ready;
    }
    const reviewer = createClient({ url: srv.url, token: srv.tokens.alice });
    await reviewer.decide(id, { outcome: "approved", reviewer: "alice" });
    while (resumed.length < 1) await new Promise<void>((r) => (wake = r));
    // A resume by hand now finds the ticket taken.
    const manual = await resumeThread({ graph, airlock, threadId: "h1", by: "manual" });
    for (const r of resumers.splice(0)) await r.stop();
    expect(errors).toEqual([]);
    expect(manual.resumed).toBe(false);
    expect(resumed).toHaveLength(1);
    expect(count(log, "tool")).toBe(1);
    expect((await graph.getState(threadConfig("h1"))).next).toEqual([]);
    // The ticket is not a request: the agent's only request is its gate, decided.
    const listed = await airlock.list();
    expect(listed.items.map((r) => [r.id, r.status])).toEqual([[id, "approved"]]);
  });

  it("two resumeThread calls at once: one resumes, the other finds it already resumed", async () => {
    const { airlock, graph, id } = await parked("h2");
    await createClient({ url: srv.url, token: srv.tokens.bob }).decide(id, {
      outcome: "approved",
      reviewer: "bob",
    });
    const outs = await Promise.all(
      ["a", "b"].map((by) => resumeThread({ graph, airlock, threadId: "h2", by })),
    );
    expect(outs.map((o) => (o.resumed ? "resumed" : o.reason)).sort()).toEqual([
      "already_resumed",
      "resumed",
    ]);
    expect(count(log, "tool")).toBe(1);
  });
});
