// Embed tokens on their own: what a signature covers, what is refused, and where one may go.
import { describe, expect, it } from "vitest";
import {
  assertEmbedScope,
  createEmbedTokens,
  type EmbedClaims,
  embedTokenId,
} from "../../src/server/embed/token.js";

const SECRET = "token-test-secret-0123456789abcdefgh";
const claims: EmbedClaims = {
  requestId: "req_1",
  reviewer: "alice",
  groups: ["ops"],
  expiresAt: 2_000_000_000_000,
  mintedBy: "chat-app",
  minterTokenId: "tok_1",
  minterRoles: ["app"],
};

describe("embed tokens", () => {
  it("reads back what it signed, and two mints differ", () => {
    const tokens = createEmbedTokens(SECRET);
    const a = tokens.mint(claims);
    const b = tokens.mint(claims);
    expect(a).toMatch(/^ale_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(a).not.toBe(b);
    expect(tokens.read(a)).toEqual(claims);
    // Another server with the same secret accepts it; one with a random secret does not.
    expect(createEmbedTokens(SECRET).read(a)).toEqual(claims);
    expect(createEmbedTokens().read(a)).toBeUndefined();
    expect(embedTokenId(a)).toMatch(/^embed_/);
    expect(embedTokenId(a)).not.toBe(embedTokenId(b));
  });

  it("refuses anything malformed or altered", () => {
    const tokens = createEmbedTokens(SECRET);
    const good = tokens.mint(claims);
    const [payload = "", mac = ""] = good.slice(4).split(".");
    const flip = (s: string) => (s[0] === "A" ? "B" : "A") + s.slice(1);
    for (const bad of [
      "",
      "alk_abc",
      good.replace("ale_", "alk_"),
      `ale_${payload}`,
      `ale_${payload}.${mac}.x`,
      `ale_${flip(payload)}.${mac}`,
      `ale_${payload}.${flip(mac)}`,
      `ale_${payload}.${mac.slice(0, -2)}`,
      `ale_!!!.${mac}`,
    ]) {
      expect(tokens.read(bad), bad).toBeUndefined();
    }
    // A well-signed payload that is not a token's shape.
    const other = createEmbedTokens(SECRET);
    const shapeless = other.mint({ ...claims, groups: "ops" as unknown as string[] });
    expect(other.read(shapeless)).toBeUndefined();
  });

  it("opens the three routes of its own request only", () => {
    const ok: [string, string][] = [
      ["GET", "/v1/embed/requests/req_1"],
      ["GET", "/v1/embed/requests/req_1/wait"],
      ["POST", "/v1/embed/requests/req_1/decisions"],
    ];
    for (const [method, path] of ok)
      expect(() => assertEmbedScope(claims, method, path)).not.toThrow();
    const refused: [string, string][] = [
      ["POST", "/v1/embed/requests/req_1"],
      ["GET", "/v1/embed/requests/req_1/decisions"],
      ["DELETE", "/v1/embed/requests/req_1"],
      ["GET", "/v1/embed/requests/req_2"],
      ["GET", "/v1/embed/requests/req_1/"],
      ["GET", "/v1/embed/requests/req_1%2F..%2Freq_2"],
      ["GET", "/v1/requests/req_1"],
      ["GET", "/v1/requests"],
    ];
    for (const [method, path] of refused) {
      expect(() => assertEmbedScope(claims, method, path), `${method} ${path}`).toThrow(
        /opens only/,
      );
    }
  });

  it("wants a secret of 32 characters or more, and never shows it", () => {
    expect(() => createEmbedTokens("too-short-secret")).toThrow(/16 characters/);
    expect(() => createEmbedTokens("too-short-secret")).not.toThrow(/too-short-secret/);
  });
});
