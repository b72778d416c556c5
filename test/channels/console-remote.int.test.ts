// runRemoteReview: the console through a real server on loopback, in process (the CLI's own test,
// test/cli/review.int.test.ts, drives `airlock review --url` as a child process).
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runRemoteReview } from "../../src/channels/review.js";
import { startTestServer, type TestServer } from "../server/helpers.js";
import { REVIEW_PROMPT, terminal } from "./terminal.js";

let s: TestServer;
beforeEach(async () => {
  s = await startTestServer();
});
afterEach(async () => {
  await s.close();
});

/** A fetch that lets `rewrite` change the server's answers to GET …/view. */
function viewRewriting(rewrite: (body: { viewDigest: string }, n: number) => Response | undefined) {
  let n = 0;
  return (async (input: RequestInfo | URL, init?: RequestInit) => {
    const answer = await fetch(input, init);
    const url = String(input instanceof Request ? input.url : input);
    if (!/\/v1\/requests\/[^/]+\/view$/.test(new URL(url).pathname)) return answer;
    const body = (await answer.json()) as { viewDigest: string };
    return (
      rewrite(body, n++) ??
      new Response(JSON.stringify(body), {
        status: answer.status,
        headers: { "content-type": "application/json" },
      })
    );
  }) as typeof fetch;
}

describe("runRemoteReview", () => {
  it("a quorum approval is counted and the request is not shown again", async () => {
    const r = await s.airlock.request({
      title: "Rotate keys",
      requester: "bot",
      approvers: ["ops"],
      quorum: 2,
    });
    const t = terminal();
    t.input.write("a\n");
    const result = await runRemoteReview({
      ...t,
      url: s.url,
      token: s.tokens.alice,
      timeoutMs: 5000,
      colour: false,
    });
    expect(result).toEqual({ reviewed: 1, stopped: "queue_empty" });
    expect(t.text()).toContain(`Approval recorded (1 of 2 needed; ${r.id} stays pending).`);
    expect(t.text()).toContain("2 approvals needed");
    const now = await s.airlock.get(r.id);
    expect(now.status).toBe("pending");
    expect(now.decisions).toEqual([expect.objectContaining({ reviewer: "alice" })]);
  });

  it("a decision on a view that is not the request's is refused by the server and shown again", async () => {
    const r = await s.airlock.request({
      title: "Restart web",
      requester: "bot",
      approvers: ["ops"],
    });
    const t = terminal();
    const done = runRemoteReview({
      ...t,
      url: s.url,
      token: s.tokens.alice,
      timeoutMs: 5000,
      colour: false,
      // The first view the console reads carries another digest, as if the request had changed.
      fetch: viewRewriting((body, n) =>
        n === 0
          ? new Response(JSON.stringify({ ...body, viewDigest: "0".repeat(64) }), {
              headers: { "content-type": "application/json" },
            })
          : undefined,
      ),
    });
    await t.waitFor("Your decision [a/r/d]: ");
    t.type("a");
    await t.waitFor(
      `Not recorded: ${r.id} changed while it was shown; here it is as it stands now.`,
    );
    await t.waitFor("Your decision [a/r/d]: ", 2);
    expect((await s.airlock.get(r.id)).status).toBe("pending");
    t.type("a");
    expect(await done).toEqual({ reviewed: 1, stopped: "queue_empty" });
    const view = await s.call(s.tokens.alice, "GET", `/v1/requests/${r.id}/view`);
    expect((await s.airlock.get(r.id)).decision).toMatchObject({
      reviewer: "alice",
      viewDigest: view.body.viewDigest,
    });
  });

  it("a request gone between the listing and its view is skipped, not a crash", async () => {
    const first = await s.airlock.request({ title: "First", requester: "bot", approvers: ["ops"] });
    const second = await s.airlock.request({
      title: "Second",
      requester: "bot",
      approvers: ["ops"],
    });
    const t = terminal();
    t.input.write("d\n");
    const result = await runRemoteReview({
      ...t,
      url: s.url,
      token: s.tokens.alice,
      timeoutMs: 5000,
      colour: false,
      fetch: viewRewriting((_body, n) =>
        n === 0
          ? new Response(
              JSON.stringify({ code: "not_found", detail: `request ${first.id} does not exist` }),
              { status: 404, headers: { "content-type": "application/problem+json" } },
            )
          : undefined,
      ),
    });
    expect(result).toEqual({ reviewed: 1, stopped: "queue_empty" });
    expect(t.text()).toContain(`Not shown: ${first.id} is no longer there for you to decide.`);
    expect((await s.airlock.get(first.id)).status).toBe("pending");
    expect((await s.airlock.get(second.id)).status).toBe("rejected");
  });

  it("stops on the console's timeout, leaving the request pending", async () => {
    const r = await s.airlock.request({
      title: "x",
      items: ["a", "b"],
      requester: "bot",
      approvers: ["ops"],
    });
    const t = terminal();
    const done = runRemoteReview({ ...t, url: s.url, token: s.tokens.alice, timeoutMs: 300 });
    await t.waitFor(REVIEW_PROMPT);
    expect(await done).toEqual({ reviewed: 0, stopped: "timeout" });
    expect((await s.airlock.get(r.id)).status).toBe("pending");
  });
});
