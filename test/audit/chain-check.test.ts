// The fast event hasher used by verification and prune gives exactly `hashEvent`'s hashes, plain and
// keyed (short and long keys), for awkward events; the text a store keeps (`placeEvent`'s dataJson)
// is what the hash covers; the chain check takes data as stored text, written canonically or not,
// and catches edits of it; and it starts at an anchor.
import { describe, expect, it } from "vitest";
import {
  auditKeyBytes,
  chainEvent,
  hashEvent,
  hashedDataText,
  placeEvent,
} from "../../src/audit/chain.js";
import { createChainCheck, createEventHasher } from "../../src/audit/chain-check.js";
import { canonicalJson } from "../../src/core/hash.js";
import type { AuditDraft, AuditEvent } from "../../src/core/schemas.js";

const drafts: AuditDraft[] = [
  {
    type: "created",
    requestId: "req_1",
    actor: "agent",
    at: 1_700_000_000_000,
    data: { title: "x" },
  },
  { type: "notified", actor: "system", at: 1.5, data: {} },
  {
    type: "decided",
    requestId: 'req_\u00e9\u{1F600}"\\',
    actor: "al\nice",
    at: 1_700_000_000_123.25,
    data: { z: 1, a: [3, { y: null, b: "\u2028" }], outcome: "approved", m: { k: true } },
  },
  { type: "viewed", requestId: "r", actor: "", at: 0, data: { "": "", "\u0000": -0.5 } },
  // Longer than the hasher's first buffer.
  { type: "notified", actor: "system", at: 2, data: { big: "\u00e9x".repeat(5000) } },
];

describe("hashedDataText", () => {
  it("is the text the event's hash covers, kept from chainEvent, and made for any other event", () => {
    const draft: AuditDraft = {
      type: "decided",
      requestId: "r1",
      actor: "alice",
      at: 5,
      data: { outcome: "approved", b: [1, { y: 2, x: 1 }] },
    };
    const placed = placeEvent(draft, undefined);
    expect(hashedDataText(placed.event)).toBe(placed.dataJson);
    const chained = chainEvent(draft, undefined);
    expect(hashedDataText(chained)).toBe(placed.dataJson);
    // An event read back or built elsewhere (not placed here): the same text, made from its data.
    expect(hashedDataText({ ...chained })).toBe(placed.dataJson);
    expect(hashedDataText({ ...chained })).toBe(canonicalJson(draft.data));
  });
});

describe("createEventHasher", () => {
  const keys = [undefined, auditKeyBytes("k".repeat(32)), auditKeyBytes("long".repeat(40))];
  it.each(keys.map((k) => [k ? `a ${k.length}-byte key` : "no key", k]))(
    "hashes like hashEvent with %s",
    (_name, key) => {
      const hasher = createEventHasher(key as Buffer | undefined);
      let prev: AuditEvent | undefined;
      for (const d of drafts) {
        const { event: e, dataJson } = placeEvent(d, prev, key as Buffer | undefined);
        expect(e).toEqual(chainEvent(d, prev, key as Buffer | undefined));
        expect(dataJson).toBe(canonicalJson(d.data));
        expect(hasher(e, dataJson)).toBe(
          hashEvent(e.seq, e, e.prevHash, key as Buffer | undefined),
        );
        expect(hasher(e, dataJson)).toBe(e.hash);
        prev = e;
      }
    },
  );
});

describe("createChainCheck", () => {
  const chained = () => {
    const events: AuditEvent[] = [];
    let prev: AuditEvent | undefined;
    for (const d of drafts) {
      prev = chainEvent(d, prev);
      events.push(prev);
    }
    return events;
  };
  const asStored = ({ data, ...e }: AuditEvent, text: string) => ({ ...e, dataJson: text });

  it("checks data given as stored text: canonical as stores write it, or as older versions wrote it", () => {
    const events = chained();
    const canonical = createChainCheck();
    for (const e of events)
      expect(canonical.push(asStored(e, canonicalJson(e.data)))).toBeUndefined();
    // JSON.stringify keeps the keys as inserted (z before a): the text is parsed and hashed again,
    // in both orders of trying as the kinds of text alternate.
    const older = createChainCheck();
    for (const [i, e] of events.entries()) {
      const text = i % 2 === 0 ? JSON.stringify(e.data) : canonicalJson(e.data);
      expect(older.push(asStored(e, text))).toBeUndefined();
    }
    expect(older.count).toBe(events.length);
  });

  it("catches stored text that was edited, unparsable, or another value in canonical form", () => {
    const events = chained();
    const decided = events[2];
    if (!decided) throw new Error("fixture");
    const edits = [
      canonicalJson({ ...decided.data, outcome: "rejected" }),
      JSON.stringify({ ...decided.data, outcome: "rejected" }),
      `${canonicalJson(decided.data)} `.replace("approved", "rejected"),
      "{not json",
      // Nested past any depth written: refused before it is parsed, not a stack overflow.
      `{"a":${"[".repeat(20_000)}${"]".repeat(20_000)}}`,
      `{"a":${"[".repeat(100)}${"]".repeat(100)}}`,
      // The same value re-spelled: a duplicate key (JSON.parse keeps the last), spaces, an escape.
      `{"outcome":"approved",${canonicalJson(decided.data).slice(1)}`,
      canonicalJson(decided.data).replaceAll(":", ": "),
      canonicalJson(decided.data).replace('"outcome"', '"\\u006futcome"'),
      // The data's text with the rest of the hashed text after it: the fields around it are fixed.
      `${canonicalJson(decided.data)},"x":1`,
    ];
    for (const text of edits) {
      const check = createChainCheck();
      expect(check.push(events[0] as AuditEvent)).toBeUndefined();
      expect(check.push(events[1] as AuditEvent)).toBeUndefined();
      expect(check.push(asStored(decided, text))).toMatchObject({
        ok: false,
        badSeq: 3,
        reason: expect.stringMatching(/was altered/),
      });
    }
  });

  it("starts after an anchor and needs the next event to link to it", () => {
    const events = chained();
    const [, second, third, fourth] = events;
    if (!second || !third || !fourth) throw new Error("fixture");
    const check = createChainCheck({ start: { seq: second.seq, hash: second.hash } });
    expect(check.push(third)).toBeUndefined();
    expect(check.push(fourth)).toBeUndefined();
    expect(check.last).toEqual({ seq: 4, hash: fourth.hash });

    const wrong = createChainCheck({ start: { seq: 2, hash: "f".repeat(64) } });
    expect(wrong.push(third)).toMatchObject({ ok: false, badSeq: 3 });
    const gap = createChainCheck({ start: { seq: 1, hash: events[0]?.hash ?? "" } });
    expect(gap.push(third)).toMatchObject({
      ok: false,
      badSeq: 3,
      reason: expect.stringMatching(/expected event #2/),
    });
  });
});
