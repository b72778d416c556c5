import { describe, expect, it } from "vitest";
import { runExample } from "./index.js";

describe("example: an OpenAI Agents SDK agent gated by Airlock (offline)", () => {
  it("an approved mail is sent once and the agent reports it", async () => {
    const out = await runExample(async (airlock, id) => {
      await airlock.decide(id, { outcome: "approved", reviewer: "alice" });
    });
    expect(out.sent).toEqual([{ to: "partner@elsewhere.org", body: "Contract attached." }]);
    expect(out.finalOutput).toBe("Done. sent to partner@elsewhere.org");
  });

  it("a rejected mail is not sent and the agent hears why", async () => {
    const out = await runExample(async (airlock, id) => {
      await airlock.decide(id, { outcome: "rejected", reviewer: "bob", comment: "legal first" });
    });
    expect(out.sent).toEqual([]);
    expect(out.finalOutput).toContain('rejected this send_email call by bob: "legal first"');
  });

  it("internal mail passes by policy with no gate; an edited mail goes where the reviewer said", async () => {
    const reviewed: string[] = [];
    const out = await runExample(
      async (airlock, id) => {
        reviewed.push(id);
        await airlock.decide(id, {
          outcome: "approved",
          method: "edit",
          reviewer: "carol",
          editedArgs: { to: "legal@example.com", body: "Please review." },
        });
      },
      [
        { to: "team@example.com", body: "FYI" },
        { to: "partner@elsewhere.org", body: "Contract attached." },
      ],
    );
    expect(reviewed).toHaveLength(1);
    expect(out.sent).toEqual([
      { to: "team@example.com", body: "FYI" },
      { to: "legal@example.com", body: "Please review." },
    ]);
    expect(out.finalOutput).toContain("carol edited the arguments");
  });
});
