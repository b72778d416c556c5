// The AI SDK refund desk end to end, offline: approved (the refund is paid once), rejected (the
// model reads the reviewer's reason, nothing is paid), and the file run as a program.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Airlock, createAirlock } from "../../../src/index.js";
import { sqliteStore } from "../../../src/store/sqlite-entry.js";
import { scriptArgs } from "../../../test/helpers.js";
import { runRefundChat } from "./index.js";

let airlock: Airlock;
beforeEach(async () => {
  airlock = await createAirlock({ store: sqliteStore(":memory:") });
});
afterEach(async () => {
  await airlock.close();
});

describe("examples/adapters/ai-sdk (refund desk)", () => {
  it("an approved refund is paid once, with the request showing what was asked", async () => {
    const lines: string[] = [];
    const result = await runRefundChat({
      airlock,
      review: (request) => {
        expect(request).toMatchObject({
          title: "Refund 120.00 on order A-42",
          action: "issueRefund",
          args: { orderId: "A-42", amountCents: 12_000 },
          risk: "high",
        });
        expect(request.preview).toBe("Refund **120 USD** on order `A-42`");
        return { outcome: "approved", reviewer: "dana" };
      },
      log: (l) => lines.push(l),
    });
    expect(result.ledger).toEqual([{ orderId: "A-42", amountCents: 12_000 }]);
    expect(result.text).toBe('issueRefund returned {"refunded":12000,"orderId":"A-42"}');
    expect(result.request.executedAt).toBeTypeOf("number");
    expect(lines[1]).toMatch(/^airlock: request req_\S+ "Refund 120.00 on order A-42" is pending$/);
  });

  it("a rejected refund is not paid and the model is told why", async () => {
    const result = await runRefundChat({
      airlock,
      review: () => ({
        outcome: "rejected",
        reviewer: "dana",
        comment: "refund only the damaged item",
      }),
    });
    expect(result.ledger).toEqual([]);
    expect(result.text).toContain(
      "issueRefund was not run: Rejected by dana: refund only the damaged item",
    );
  });

  it("runs as a program, offline", () => {
    const file = fileURLToPath(new URL("./index.ts", import.meta.url));
    const r = spawnSync(process.execPath, scriptArgs(file), {
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("reviewer dana: approved (customer is right)");
    expect(r.stdout).toContain('ledger: [{"orderId":"A-42","amountCents":12000}]');
  }, 60_000);
});
