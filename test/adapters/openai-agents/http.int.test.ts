// The resumers against a real server on 127.0.0.1 with an AGENT token (not admin): gates are opened
// under the token's own name (no hard-coded requester), the resumer's listing is not narrowed to
// another requester, and the turn's ticket is taken through POST /v1/tickets, which an agent may
// call (scoped to the token's principal), and is no request. The decision is made with a reviewer
// token.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  parkInterruptions,
  type Resumer,
  resumeOnDecision,
  resumeRun,
} from "../../../src/adapters/openai-agents.js";
import { createClient } from "../../../src/index.js";
import { startTestServer, type TestServer } from "../../server/helpers.js";
import { mailer } from "./fixtures/mailer.js";

let srv: TestServer;
const resumers: Resumer[] = [];
beforeEach(async () => {
  srv = await startTestServer();
});
afterEach(async () => {
  for (const r of resumers.splice(0)) await r.stop();
  await srv.close();
});

async function parked() {
  const airlock = createClient({ url: srv.url, token: srv.tokens.agent, pollMs: 50 });
  const sent: string[] = [];
  const { agent, runner } = mailer(airlock, { onSend: ({ to }) => sent.push(to) });
  const first = await runner.run(agent, "Send the contract.");
  const { requests } = await parkInterruptions(airlock, first);
  const id = requests[0]?.id as string;
  return { airlock, agent, runner, sent, id, requester: requests[0]?.requester };
}

describe("airlock/openai-agents over HTTP with an agent token", () => {
  it("two resumers resume the parked run once after a reviewer's decision", async () => {
    const { airlock, agent, runner, sent, id, requester } = await parked();
    expect(requester).toBe("bot");
    const outputs: unknown[] = [];
    const errors: unknown[] = [];
    let wake: (() => void) | undefined;
    for (let i = 0; i < 2; i++) {
      const r = resumeOnDecision({
        airlock,
        runner,
        agent,
        pollMs: 50,
        onResult: (result) => {
          outputs.push(result.finalOutput);
          wake?.();
        },
        onError: (err) => errors.push(err),
      });
      resumers.push(r);
      await r.ready;
    }
    const reviewer = createClient({ url: srv.url, token: srv.tokens.alice });
    await reviewer.decide(id, { outcome: "approved", reviewer: "alice" });
    while (outputs.length < 1) await new Promise<void>((r) => (wake = r));
    // A resume by hand now finds the turn's ticket taken.
    const manual = await resumeRun(airlock, runner, agent, id);
    for (const r of resumers.splice(0)) await r.stop();
    expect(errors).toEqual([]);
    expect(manual.status).toBe("already_resumed");
    expect(outputs).toEqual(["Done. sent to partner@elsewhere.org"]);
    expect(sent).toEqual(["partner@elsewhere.org"]);
    // The ticket is finished, held by the agent's principal, and no request.
    expect(await airlock.takeTicket(`openai-agents-resume:${id}`)).toMatchObject({
      taken: false,
      finished: true,
      holder: expect.stringMatching(/^bot#/),
    });
    expect(await airlock.getByKey(`openai-agents-resume:${id}`)).toBeUndefined();
    expect((await airlock.list()).items.map((r) => r.id)).toEqual([id]);
  });

  it("two resumeRun calls at once: one resumes, the other finds it already resumed", async () => {
    const { airlock, agent, runner, sent, id } = await parked();
    await createClient({ url: srv.url, token: srv.tokens.bob }).decide(id, {
      outcome: "approved",
      reviewer: "bob",
    });
    const outs = await Promise.all([
      resumeRun(airlock, runner, agent, id),
      resumeRun(airlock, runner, agent, id),
    ]);
    expect(outs.map((o) => o.status).sort()).toEqual(["already_resumed", "resumed"]);
    expect(sent).toEqual(["partner@elsewhere.org"]);
  });
});
