import { describe, expect, it } from "vitest";
import { jsonDepthExceeds, MAX_JSON_DEPTH } from "../../src/core/limits.js";

function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

describe("jsonDepthExceeds", () => {
  it("counts each object or array as one level", () => {
    expect(jsonDepthExceeds(1, 0)).toBe(false);
    expect(jsonDepthExceeds({}, 0)).toBe(true);
    expect(jsonDepthExceeds({ a: [1] }, 2)).toBe(false);
    expect(jsonDepthExceeds({ a: [1] }, 1)).toBe(true);
    expect(jsonDepthExceeds(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(jsonDepthExceeds(nested(MAX_JSON_DEPTH + 1))).toBe(true);
  });

  it("walks 100,000 levels without overflowing the stack", () => {
    expect(jsonDepthExceeds(nested(100_000))).toBe(true);
  });

  it("treats a value that contains itself as too deep, and stays quick on shared sub-values", () => {
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    expect(jsonDepthExceeds(loop)).toBe(true);
    // 40 levels each holding the level below twice: 2^40 paths, but only 40 values.
    let shared: unknown = {};
    for (let i = 0; i < 40; i++) shared = [shared, shared];
    expect(jsonDepthExceeds(shared)).toBe(false);
  });
});
