// The redaction rules against canary secrets (redaction-canaries.json, shared with the Python
// client): every secret is hidden wherever it sits (under its key, nested, in arrays, in markdown,
// in a key name), the exact output is the one both languages agree on, and ordinary text is left.
import { describe, expect, it } from "vitest";
import {
  isSensitiveKey,
  REDACTED,
  REDACTION_RULES,
  redact,
  redactString,
} from "../../src/audit/redact.js";
import { CANARIES, leaked, markdownWithCanaries, objectWithCanaries, SECRETS } from "./canaries.js";

describe("canary secrets", () => {
  it("has 40+ of them, each distinct", () => {
    expect(SECRETS.length).toBeGreaterThanOrEqual(40);
    expect(new Set(SECRETS).size).toBe(SECRETS.length);
  });

  describe.each(CANARIES.keyed)("under the key $key", ({ key, secret }) => {
    it("is replaced at any depth and in arrays", () => {
      expect(isSensitiveKey(key)).toBe(true);
      const out = redact({
        [key]: secret,
        a: { b: [{ [key]: secret }, { c: { [key]: [secret] } }] },
      });
      expect(out).toEqual({
        [key]: REDACTED,
        a: { b: [{ [key]: REDACTED }, { c: { [key]: REDACTED } }] },
      });
    });

    it.each([
      ["name: value", `${key}: ${secret}`],
      ["name=value", `${key}=${secret}`],
      ["JSON text", JSON.stringify({ [key]: secret, other: 1 })],
      ["markdown bold", `**${key}:** ${secret}`],
      ["markdown code", `\`${key}\`: ${secret}`],
      ["a line among others", `## Config\n\nhost: db\n${key} = ${secret}\nport: 5432`],
    ])("is hidden in free text (%s)", (_label, text) => {
      const out = redactString(text);
      expect(out).not.toContain(secret);
      expect(out).toContain(key);
    });
  });

  describe.each(CANARIES.values)("the value $id", ({ id, text, secret, redacted }) => {
    it("gives the agreed output, without the secret", () => {
      expect(redactString(text)).toBe(redacted);
      expect(redacted).not.toContain(secret);
    });

    it("is hidden under ordinary keys, nested, in arrays and as a key name", () => {
      const input = {
        note: text,
        nested: { list: [{ detail: text }, [text, "kept"]] },
        [text]: "kept",
      };
      const out = redact(input);
      expect(leaked(JSON.stringify(out))).toEqual([]);
      expect(JSON.stringify(out)).toContain("kept");
      // The input is not touched.
      expect(input.note).toBe(text);
    });

    it("is hidden in markdown prose, lists, code spans and quotes", () => {
      const md = [
        "## Summary",
        "",
        `The agent will run ${text} and then report.`,
        `- ${text}`,
        `Use \`${text}\` here.`,
        `> quoted: "${text}"`,
        "Done.",
      ].join("\n");
      const out = redactString(md);
      expect(out).not.toContain(secret);
      expect(out).toContain("## Summary");
      // A private key without its END line hides all that follows it.
      if (id !== "pem_truncated") expect(out).toContain("Done.");
    });
  });

  it("leaves nothing of any of them in a document holding all", () => {
    expect(leaked(JSON.stringify(redact(objectWithCanaries())))).toEqual([]);
    expect(leaked(redactString(markdownWithCanaries()))).toEqual([]);
  });
});

describe("ordinary text", () => {
  it.each(CANARIES.ordinary)("is left as it is: %j", (text) => {
    expect(redactString(text)).toBe(text);
    expect(redact({ note: text, list: [text] })).toEqual({ note: text, list: [text] });
    // As a key name it is kept too (its value follows the key rules).
    expect(Object.keys(redact({ [text]: 1 }))).toEqual([text]);
  });

  it("keeps ordinary key names", () => {
    for (const k of CANARIES.ordinaryKeys) expect(isSensitiveKey(k), k).toBe(false);
  });
});

describe("the rules file", () => {
  it("lists 40+ key words and compiles every value pattern", () => {
    expect(
      REDACTION_RULES.keys.anywhere.length + REDACTION_RULES.keys.words.length,
    ).toBeGreaterThan(40);
    for (const rule of REDACTION_RULES.values) {
      expect(() => new RegExp(rule.pattern, `g${rule.flags}`), rule.id).not.toThrow();
    }
  });

  it("has every value pattern caught by a canary", () => {
    // A rule no canary needs is a rule no test guards.
    for (const rule of REDACTION_RULES.values) {
      const regex = new RegExp(rule.pattern, `g${rule.flags}`);
      const hit = CANARIES.values.some((c) => {
        regex.lastIndex = 0;
        return regex.test(c.text);
      });
      expect(hit, rule.id).toBe(true);
    }
  });
});
