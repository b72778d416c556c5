// Redaction: key names normalised against the built-in list and configured names, and credentials
// found inside string values (URLs, Authorization headers, bare bearer tokens, name=value pairs).
import { describe, expect, it } from "vitest";
import {
  createRedactor,
  isSensitiveKey,
  keyWords,
  REDACTED,
  redact,
  redactString,
} from "../../src/audit/redact.js";

describe("sensitive key names", () => {
  it("normalises case, separators and camelCase", () => {
    expect(keyWords("X-Auth-Token")).toEqual(["x", "auth", "token"]);
    expect(keyWords("apiKEYValue")).toEqual(["api", "key", "value"]);
    expect(keyWords("API Key")).toEqual(["api", "key"]);
    expect(keyWords("db.private_key")).toEqual(["db", "private", "key"]);
  });

  it("recognises the names an attacker probed with", () => {
    for (const k of [
      "passwd",
      "pwd",
      "pass",
      "passphrase",
      "private_key",
      "privateKey",
      "ssh_key",
      "SSH-KEY",
      "access_key",
      "awsAccessKeyId",
      "API Key",
      "api-key",
      "bearer",
      "cookie",
      "Set-Cookie",
      "session",
      "sessionId",
      "user_session",
      "jwt",
      "dsn",
      "sentryDsn",
      "connection_string",
      "connectionString",
      "credit_card",
      "creditCardNumber",
      "cvv",
      "pin",
      "card_pin",
      "pinCode",
      "signature",
      "X-Hub-Signature",
      // the earlier list still holds
      "password",
      "DB_PASSWORD",
      "clientSecret",
      "token",
      "accessToken",
      "refreshtoken",
      "api_key",
      "apiKey",
      "credentials",
      "auth",
      "Authorization",
      "oauth",
    ]) {
      expect(isSensitiveKey(k), k).toBe(true);
    }
  });

  it("leaves common words alone", () => {
    for (const k of [
      "path",
      "amount",
      "title",
      "user",
      "spinner",
      "pinned",
      "shipping",
      "passenger",
      "bypass",
      "compass",
      "session_count",
      "sessions",
      "author",
      "authors",
      "max_tokens",
      "max_token",
      "token_count",
      "tokenLimit",
      "prompt_tokens",
      "tokenizer",
      "key",
      "signed",
      "cookbook",
    ]) {
      expect(isSensitiveKey(k), k).toBe(false);
    }
  });

  it("adds configured names, per call or per redactor (an engine's)", () => {
    expect(isSensitiveKey("employee_ssn")).toBe(false);
    expect(isSensitiveKey("employee_ssn", { extraKeys: ["SSN"] })).toBe(true);
    expect(redact({ employeeSsn: "123" }, { extraKeys: ["ssn"] })).toEqual({
      employeeSsn: REDACTED,
    });
    const configured = createRedactor({ keys: ["tax-id"] });
    expect(configured.isSensitiveKey("customerTaxId")).toBe(true);
    expect(configured.redact({ tax_id: "x", name: "n" })).toEqual({ tax_id: REDACTED, name: "n" });
    expect(isSensitiveKey("customerTaxId")).toBe(false);
  });
});

describe("credentials inside strings", () => {
  it("URLs keep their user and host, lose their password", () => {
    expect(redactString("postgres://u:PW@db.internal:5432/app")).toBe(
      "postgres://u:***@db.internal:5432/app",
    );
    expect(redactString("connect to redis://:s3cret@cache:6379 now")).toBe(
      "connect to redis://:***@cache:6379 now",
    );
    expect(redactString("https://example.com/a?token=abc123&page=2&api_key=zz")).toBe(
      "https://example.com/a?token=***&page=2&api_key=***",
    );
    // No credentials: unchanged.
    expect(redactString("ssh://git@github.com/x.git and https://example.com/?q=1")).toBe(
      "ssh://git@github.com/x.git and https://example.com/?q=1",
    );
  });

  it("Authorization headers and bare bearer tokens", () => {
    expect(redactString("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc.def")).toBe(
      "Authorization: Bearer ***",
    );
    expect(redactString("curl -H 'authorization: Basic dXNlcjpwYXNz' https://x")).toBe(
      "curl -H 'authorization: Basic ***' https://x",
    );
    expect(redactString("send Bearer abcd1234efgh to the API")).toBe("send Bearer *** to the API");
    expect(redactString("the bearer of good news")).toBe("the bearer of good news");
  });

  it("name=value pairs whose name is sensitive", () => {
    expect(redactString("DB_PASSWORD=hunter2 DB_HOST=localhost")).toBe(
      "DB_PASSWORD=*** DB_HOST=localhost",
    );
    expect(redactString('{"password":"hunter2","user":"bob"}')).toBe(
      '{"password":"***","user":"bob"}',
    );
    expect(redactString("max_tokens=100 pin: 1234")).toBe("max_tokens=100 pin: ***");
    expect(redactString("the password is in the vault")).toBe("the password is in the vault");
  });

  it("redact() applies to strings at any depth", () => {
    const input = {
      command: "psql postgres://admin:topsecret@db/app",
      nested: [{ header: "Authorization: Bearer abc.def.ghi123" }],
      apiKey: "k",
      n: 3,
    };
    expect(redact(input)).toEqual({
      command: "psql postgres://admin:***@db/app",
      nested: [{ header: "Authorization: Bearer ***" }],
      apiKey: REDACTED,
      n: 3,
    });
    expect(input.command).toContain("topsecret");
  });

  it("costs linear time on long strings without a match", () => {
    const long = `${"a.".repeat(200_000)}${"?b".repeat(100_000)}${"x".repeat(200_000)}`;
    const started = Date.now();
    expect(redactString(long)).toBe(long);
    // Loosely: a quadratic scan of this string takes minutes.
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
