// The hashes everything else is bound by: SHA-256 as FIPS 180-2 gives it (one-shot where Node has
// it, a Hash object otherwise, the same bytes either way), over UTF-8; canonical JSON with keys sorted
// at every depth.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalJson, parseStoredObject, sha256, sha256OneShot } from "../../src/core/hash.js";

describe("sha256", () => {
  it("gives the standard digests, of UTF-8 text, as hex and as bytes", () => {
    expect(sha256("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(sha256("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    for (const text of ["é\u{1F600}\u2028", "x".repeat(100_000)]) {
      expect(sha256(text)).toBe(createHash("sha256").update(text, "utf8").digest("hex"));
      const bytes = Buffer.from(text, "utf8");
      expect(sha256OneShot.bytes(bytes).toString("hex")).toBe(sha256(text));
    }
  });
});

describe("canonicalJson and parseStoredObject", () => {
  it("sorts keys at every depth and reads back the same object", () => {
    const v = { z: 1, a: [{ y: 2, b: null }], m: { k: "é" } };
    const text = canonicalJson(v);
    expect(text).toBe('{"a":[{"b":null,"y":2}],"m":{"k":"é"},"z":1}');
    expect(parseStoredObject(text)).toEqual(v);
  });

  it("keeps an own __proto__ key (JSON.parse makes one) as data, so different values never hash alike", () => {
    const a = JSON.parse('{"n":{"__proto__":{"x":1}},"a":1}') as unknown;
    const b = JSON.parse('{"n":{},"a":1}') as unknown;
    expect(canonicalJson(a)).toBe('{"a":1,"n":{"__proto__":{"x":1}}}');
    expect(canonicalJson(a)).not.toBe(canonicalJson(b));
    expect(JSON.parse(canonicalJson(a))).toEqual(a);
  });

  it("keeps a stored text that is not a JSON object visible instead of failing", () => {
    for (const text of ["{broken", "[1,2]", "null", '"s"']) {
      expect(parseStoredObject(text)).toEqual({ unparsable: text });
    }
  });
});
