// The stores' timed cache (src/store/timed-cache.ts): a value is read once per key and age, read
// again after, forgotten on request; a kept promise that fails is read again on the next call.
import { describe, expect, it } from "vitest";
import { keptUnlessFailed, timedCache } from "../../src/store/timed-cache.js";

describe("timedCache", () => {
  it("keeps a key's value maxAgeMs, then reads it again; keys apart", () => {
    const c = timedCache<number>(100);
    let reads = 0;
    const read = () => ++reads;
    expect(c.get("a", 0, read)).toBe(1);
    expect(c.get("a", 100, read)).toBe(1);
    expect(c.get("b", 100, read)).toBe(2);
    expect(c.get("a", 101, read)).toBe(3);
    c.forget("a", 99);
    expect(c.get("a", 102, read)).toBe(3);
    c.forget("a", 3);
    expect(c.get("a", 103, read)).toBe(4);
  });

  it("forgets every key past maxKeys", () => {
    const c = timedCache<string>(1000, 2);
    c.get("a", 0, () => "a1");
    c.get("b", 0, () => "b1");
    c.get("c", 0, () => "c1");
    expect(c.get("a", 0, () => "a2")).toBe("a2");
  });

  it("reads a failed promise again, and keeps one that succeeded", async () => {
    const c = timedCache<Promise<number>>(1000);
    let reads = 0;
    const failing = () => {
      reads++;
      return Promise.reject(new Error("down"));
    };
    await expect(keptUnlessFailed(c, "k", 0, failing)).rejects.toThrow("down");
    await expect(keptUnlessFailed(c, "k", 1, async () => ++reads)).resolves.toBe(2);
    await expect(keptUnlessFailed(c, "k", 2, async () => ++reads)).resolves.toBe(2);
  });
});
