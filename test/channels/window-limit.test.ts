// The fixed-window limit shared by audited refusals (per channel) and email answers (per address).
import { describe, expect, it } from "vitest";
import { windowLimit } from "../../src/channels/window-limit.js";

describe("windowLimit", () => {
  it("lets `limit` through per key and window, then turns the rest away until the window ends", () => {
    const dropped: [string, number][] = [];
    const w = windowLimit({ limit: 2, windowMs: 1_000, onDropped: (k, n) => dropped.push([k, n]) });
    expect([w.take("a", 0), w.take("a", 10), w.take("a", 20), w.take("a", 999)]).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(w.take("b", 30)).toBe(true); // keys are counted apart
    expect(dropped).toEqual([]);
    expect(w.take("a", 1_000)).toBe(true); // a new window
    expect(dropped).toEqual([["a", 2]]); // told once, when it starts
    expect(w.take("b", 1_030)).toBe(true);
    expect(dropped).toEqual([["a", 2]]); // nothing was turned away for b
  });

  it("starts a new window when the clock is set back", () => {
    const w = windowLimit({ limit: 1, windowMs: 60_000 });
    expect(w.take("a", 100_000)).toBe(true);
    expect(w.take("a", 100_001)).toBe(false);
    expect(w.take("a", 50_000)).toBe(true);
  });

  it("forgets every key past maxKeys instead of growing, so each starts a new window", () => {
    const w = windowLimit({ limit: 1, windowMs: 60_000, maxKeys: 3 });
    for (const k of ["a", "b", "c"]) expect(w.take(k, 0)).toBe(true);
    expect(w.take("a", 1)).toBe(false); // still known
    expect(w.take("d", 2)).toBe(true); // a fourth key: all forgotten
    expect(w.take("a", 3)).toBe(true);
  });
});
