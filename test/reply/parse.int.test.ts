import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import type { Item } from "../../src/core/schemas.js";
import { type Airlock, createAirlock } from "../../src/engine/engine.js";
import { type ParsedReply, parseReply, replyToDecision } from "../../src/reply/parse.js";
import { sqliteStore } from "../../src/store/sqlite.js";

const queries = ["query1", "query2", "query3"];
const pick = (r: ParsedReply) => (r.approved ? r.indexes.map((i) => queries[i]) : []);

describe("parseReply: the seed's cases", () => {
  it("APPROVE ALL approves every query", () => {
    const r = parseReply("APPROVE ALL", queries);
    expect(r).toMatchObject({ approved: true, method: "approve_all" });
    expect(pick(r)).toEqual(queries);
  });

  it("skip (any case) approves nothing", () => {
    expect(parseReply("skip", queries)).toEqual({
      ok: true,
      approved: false,
      outcome: "rejected",
      method: "skip",
    });
  });

  it("SELECT 1,3 approves those two", () => {
    const r = parseReply("SELECT 1,3", queries);
    expect(r).toMatchObject({ approved: true, method: "select", selected: ["item-1", "item-3"] });
    expect(pick(r)).toEqual(["query1", "query3"]);
  });

  it("SELECT invalid is a parse error and not approved", () => {
    expect(parseReply("SELECT invalid", queries)).toMatchObject({
      ok: false,
      approved: false,
      method: "parse_error",
    });
  });

  it("out-of-range indices are dropped", () => {
    const r = parseReply("SELECT 1,5,10", queries);
    expect(pick(r)).toEqual(["query1"]);
    expect(r).toMatchObject({ method: "select", dropped: ["5", "10"] });
  });
});

describe("parseReply: the grammar", () => {
  const items: Item[] = [
    { id: "a", label: "A" },
    { id: "b", label: "B" },
    { id: "c", label: "C" },
    { id: "d", label: "D" },
    { id: "e", label: "E" },
  ];

  it.each([
    ["approve all"],
    ["Approve All"],
    ["APPROVE_ALL"],
    ["approve-all"],
    ["APPROVE"],
    ["  `APPROVE ALL`  "],
    ["**approve all**."],
    ["approve all!"],
  ])("%j approves everything", (text) => {
    expect(parseReply(text, items)).toMatchObject({
      approved: true,
      method: "approve_all",
      selected: ["a", "b", "c", "d", "e"],
    });
  });

  it.each([
    ["SELECT 1-3", ["a", "b", "c"]],
    ["select 2 - 4", ["b", "c", "d"]],
    ["SELECT 4–2", ["b", "c", "d"]],
    ["SELECT 5, 1", ["a", "e"]],
    ["SELECT 1 3 5", ["a", "c", "e"]],
    ["select 1,1,1", ["a"]],
    ["SELECT #2 and #4", ["b", "d"]],
    ["SELECT 01;3", ["a", "c"]],
    ["select1,2", ["a", "b"]],
    ["SELECT 4-9", ["d", "e"]],
  ])("%j selects %j in item order", (text, ids) => {
    expect(parseReply(text, items)).toMatchObject({
      approved: true,
      method: "select",
      selected: ids,
    });
  });

  it("reports what was dropped from ranges", () => {
    expect(parseReply("SELECT 0-2, 4-9", items)).toMatchObject({
      selected: ["a", "b", "d", "e"],
      dropped: ["0", "6-9"],
    });
  });

  it.each([
    ["SELECT"],
    ["SELECT 0"],
    ["SELECT 6,7"],
    ["SELECT 99999999999999999999999"],
    ["SELECT 1,x"],
    ["SELECT -1"],
    ["SELECT 1-2-3"],
    ["SELECT 1.5"],
    ["APPROVE ALL but not 3"],
    ["approve everything"],
    ["yes"],
    ["approves"],
    [""],
    ["   \n\t  "],
    ["selection 1"],
  ])("%j is a parse error, never an approval", (text) => {
    const r = parseReply(text, items);
    expect(r).toMatchObject({ ok: false, approved: false, method: "parse_error" });
    expect(r.ok ? "" : r.error).not.toBe("");
  });

  it("SELECT without items is a parse error", () => {
    expect(parseReply("SELECT 1", [])).toMatchObject({ method: "parse_error" });
    expect(parseReply("APPROVE", [])).toMatchObject({ method: "approve_all", selected: [] });
  });

  it("REJECT and SKIP take an optional reason", () => {
    expect(parseReply("REJECT too risky today", items)).toEqual({
      ok: true,
      approved: false,
      outcome: "rejected",
      method: "reject",
      comment: "too risky today",
    });
    expect(parseReply("reject", items)).not.toHaveProperty("comment");
    expect(parseReply("Skip: enough already", items)).toMatchObject({
      method: "skip",
      comment: "enough already",
    });
  });

  it("REVISE carries a comment, which may run over several lines or be empty", () => {
    expect(parseReply("REVISE skip position 2\nand go slower", items)).toEqual({
      ok: true,
      approved: false,
      outcome: "revise",
      method: "revise",
      comment: "skip position 2\nand go slower",
    });
    expect(parseReply("revise", items)).toMatchObject({ method: "revise", comment: "" });
  });

  it("reads the command from the first non-empty line only (quoted mail below is ignored)", () => {
    const mail = "\n\nSELECT 2\n\nOn Monday, Airlock wrote:\n> Reply APPROVE ALL to proceed";
    expect(parseReply(mail, items)).toMatchObject({ method: "select", selected: ["b"] });
    expect(parseReply("> APPROVE ALL", items)).toMatchObject({ method: "approve_all" });
  });

  it("uses the engine's ids for bare labels", () => {
    expect(parseReply("SELECT 2", ["x", "y"])).toMatchObject({
      selected: ["item-2"],
      indexes: [1],
    });
  });

  it("never throws and never approves what it cannot read, whatever the string (100k runs)", () => {
    const keyword = fc.constantFrom(
      "approve",
      "APPROVE ALL",
      "select",
      "SELECT ",
      "skip",
      "reject",
      "revise",
      "",
    );
    const text = fc.oneof(
      fc.string({ unit: "binary", maxLength: 200 }),
      fc
        .tuple(keyword, fc.string({ unit: "grapheme-ascii", maxLength: 40 }))
        .map(([k, s]) => k + s),
      fc
        .tuple(
          keyword,
          fc.array(fc.oneof(fc.nat(12), fc.constantFrom(",", "-", " ", "and", "#")), {
            maxLength: 12,
          }),
        )
        .map(([k, parts]) => `${k} ${parts.join("")}`),
    );
    const ids = new Set(items.map((i) => i.id));
    fc.assert(
      fc.property(text, (t) => {
        const r = parseReply(t, items);
        if (r.approved) {
          expect(r.selected.length).toBeGreaterThan(0);
          for (const id of r.selected) expect(ids.has(id)).toBe(true);
          expect(/^\W*(approve|select)/i.test(t.trimStart())).toBe(true);
        } else if (!r.ok) {
          expect(r.outcome).toBe("rejected");
        }
      }),
      { numRuns: 100_000 },
    );
  });

  it("SELECT of any set of valid numbers selects exactly that set", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: 5 }), { minLength: 1 }),
        fc.constantFrom(",", ", ", " "),
        (nums, sep) => {
          const r = parseReply(`SELECT ${nums.join(sep)}`, items);
          expect(r.approved && r.indexes).toEqual(
            [...nums].sort((a, b) => a - b).map((n) => n - 1),
          );
        },
      ),
    );
  });

  it("stays fast on long, hostile input", () => {
    const started = performance.now();
    parseReply(`REVISE ${" ".repeat(50_000)}x`, items);
    parseReply(`SELECT ${"1 ".repeat(20_000)}`, items);
    parseReply(`APPROVE${" \t".repeat(30_000)}!`, items);
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe("replyToDecision", () => {
  const who = { reviewer: "ann", channel: "chat" as const };

  it("maps each reply to the decision to record", () => {
    const items = ["q1", "q2", "q3"];
    expect(replyToDecision(parseReply("APPROVE ALL", items), who)).toEqual({
      reviewer: "ann",
      channel: "chat",
      outcome: "approved",
      method: "approve_all",
    });
    expect(replyToDecision(parseReply("SELECT 2", items), who)).toMatchObject({
      outcome: "approved",
      method: "select",
      selected: ["item-2"],
    });
    expect(replyToDecision(parseReply("SKIP", items), who)).toMatchObject({
      outcome: "rejected",
      method: "skip",
    });
    expect(replyToDecision(parseReply("REVISE fewer", items), who)).toMatchObject({
      outcome: "revise",
      comment: "fewer",
    });
    expect(replyToDecision(parseReply("maybe", items), who)).toMatchObject({
      outcome: "rejected",
      method: "parse_error",
    });
  });

  describe("recorded through the engine", () => {
    let engine: Airlock | undefined;
    afterEach(async () => {
      await engine?.close();
    });

    it.each([
      ["SELECT 1,3,5", "approved", ["item-1", "item-3"]],
      ["APPROVE ALL", "approved", ["item-1", "item-2", "item-3"]],
      ["SKIP", "rejected", undefined],
      ["SELECT 9", "rejected", undefined],
    ])("%j ends %s", async (text, status, selected) => {
      engine = await createAirlock({ store: sqliteStore(":memory:"), sweeper: false });
      const r = await engine.request({ title: "more research?", items: ["q1", "q2", "q3"] });
      const decided = await engine.decide(
        r.id,
        replyToDecision(parseReply(text, r.items), { reviewer: "ann", channel: "slack" }),
      );
      expect(decided.status).toBe(status);
      expect(decided.decision?.selected).toEqual(selected);
      expect(decided.decision?.channel).toBe("slack");
    });
  });
});
