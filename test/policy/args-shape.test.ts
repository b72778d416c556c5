import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { argsShape, argsShapeHash } from "../../src/policy/args-shape.js";

describe("argsShape", () => {
  it("keeps keys and JSON types, never values", () => {
    expect(argsShape({ path: "/etc/passwd", size: 12, force: true, owner: null })).toBe(
      '{"force":boolean,"owner":null,"path":string,"size":number}',
    );
  });

  it("sorts keys at every depth, so key order does not matter", () => {
    const a = { b: 1, a: { d: "x", c: [1] } };
    const b = { a: { c: [2, 3], d: "y" }, b: 9 };
    expect(argsShape(a)).toBe(argsShape(b));
    expect(argsShape(a)).toBe('{"a":{"c":[number],"d":string},"b":number}');
  });

  it("describes an array by the distinct shapes of its elements", () => {
    expect(argsShape({ xs: [] })).toBe('{"xs":[]}');
    expect(argsShape({ xs: ["a", 1, "b", 2] })).toBe('{"xs":[number|string]}');
    expect(argsShape({ xs: [{ a: 1 }, { a: 2 }] })).toBe('{"xs":[{"a":number}]}');
    expect(argsShape({ xs: [{ a: 1 }, { b: 2 }] })).toBe('{"xs":[{"a":number}|{"b":number}]}');
  });

  it("tells apart what differs in structure", () => {
    const base = argsShape({ path: "a", content: "b" });
    expect(argsShape({ path: "a" })).not.toBe(base);
    expect(argsShape({ path: "a", content: "b", mode: 1 })).not.toBe(base);
    expect(argsShape({ path: "a", content: ["b"] })).not.toBe(base);
    expect(argsShape({ path: "a", content: { text: "b" } })).not.toBe(base);
    expect(argsShape({ path: "a", content: null })).not.toBe(base);
  });

  it("quotes keys, so a key cannot pass for the syntax around it", () => {
    expect(argsShape({ 'a":string,"b': 1 })).not.toBe(argsShape({ a: "x", b: 1 }));
  });

  it("leaves out undefined values, as JSON does, and reads a Date as its ISO string", () => {
    expect(argsShape({ a: 1, b: undefined })).toBe(argsShape({ a: 2 }));
    expect(argsShape({ at: new Date(0) })).toBe('{"at":string}');
  });

  it("hashes the canonical text with SHA-256", () => {
    const text = argsShape({ a: [1] });
    expect(argsShapeHash({ a: [5, 6] })).toBe(createHash("sha256").update(text).digest("hex"));
    expect(argsShapeHash({ a: 1 })).not.toBe(argsShapeHash({ a: "1" }));
  });
});
