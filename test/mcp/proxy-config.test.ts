// The proxy's configuration (one-line errors naming the rule) and which rule a call falls under.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadProxyConfig, ProxyConfigError, parseProxyConfig } from "../../src/mcp/proxy-config.js";
import { globMatch, judgeCall } from "../../src/mcp/proxy-rules.js";
import { upstreamEnvironment } from "../../src/mcp/proxy-upstream.js";
import { tempDir } from "../helpers.js";

const tmp = tempDir("airlock-proxy-config-");
afterAll(() => tmp.cleanup());

function problem(raw: unknown): string {
  try {
    parseProxyConfig(raw, "airlock-mcp.json");
  } catch (err) {
    expect(err).toBeInstanceOf(ProxyConfigError);
    return (err as Error).message;
  }
  throw new Error("expected the configuration to be refused");
}

describe("proxy configuration", () => {
  it("defaults: no rules, gate what no rule matches, read-only tools pass", () => {
    expect(parseProxyConfig({})).toEqual({
      rules: [],
      default: "gate",
      readOnlyPass: true,
      maxArgsBytes: 100_000,
      leaseSeconds: 300,
    });
  });

  it("names the rule and the problem in one line", () => {
    const rules = [
      { tools: "a" },
      { name: "pay", tools: "pay_*", when: { amount: { gt: "ten" } } },
    ];
    const message = problem({ rules });
    expect(message).toMatch(/^airlock-mcp\.json: rule 2 \("pay"\), when\.amount\.gt: .*number/);
    expect(message).not.toContain("\n");
    expect(problem({ rules: [{ tools: "x", action: "maybe" }] })).toContain("rule 1, action:");
    expect(problem({ rules: [{ tools: "x", when: { p: {} } }] })).toContain(
      "rule 1, when.p: needs at least one test",
    );
    expect(problem({ rules: [{ tools: "x", when: { p: { matches: "(" } } }] })).toContain(
      "is not a valid regular expression",
    );
    expect(problem({ rules: [{ tools: "x", when: { p: { startsWith: "/" } } }] })).toContain(
      "startsWith",
    );
    expect(problem({ rules: [{ tools: "x y" }] })).toContain("rule 1, tools");
    expect(problem({ rule: [] })).toContain("rule");
  });

  it("reports an unreadable file and bad JSON in one line", () => {
    const bad = join(tmp.dir, "bad.json");
    writeFileSync(bad, "{ rules: ");
    expect(() => loadProxyConfig(bad)).toThrow(/bad\.json: not valid JSON/);
    expect(() => loadProxyConfig(join(tmp.dir, "missing.json"))).toThrow(
      /missing\.json: cannot be read \(ENOENT\)/,
    );
  });
});

describe("judgeCall", () => {
  const config = parseProxyConfig({
    rules: [
      { name: "scratch", tools: "write_*", when: { path: { prefix: "/tmp/" } }, action: "allow" },
      { name: "big", tools: "pay", when: { amount: { gt: 100 } } },
      { name: "small", tools: "pay", action: "allow" },
      { name: "nested", tools: "deploy", when: { "target.env": { in: ["prod", "staging"] } } },
      {
        name: "regex",
        tools: "run",
        when: { cmd: { matches: "^rm\\b" }, force: { present: true } },
      },
    ],
    default: "allow",
  });

  it("takes the first rule whose tools and tests match, else the default", () => {
    expect(judgeCall(config, "write_file", { path: "/tmp/a" }, false).because).toBe("scratch");
    expect(judgeCall(config, "write_file", { path: "/etc/a" }, false)).toEqual({
      action: "allow",
      because: "default",
    });
    expect(judgeCall(config, "pay", { amount: 101 }, false).action).toBe("gate");
    expect(judgeCall(config, "pay", { amount: 100 }, false).because).toBe("small");
    expect(judgeCall(config, "pay", { amount: "1000" }, false).because).toBe("big");
    expect(judgeCall(config, "deploy", { target: { env: "prod" } }, false).because).toBe("nested");
    expect(judgeCall(config, "deploy", { target: { env: "dev" } }, false).because).toBe("default");
    expect(judgeCall(config, "run", { cmd: "rm -rf x", force: true }, false).because).toBe("regex");
    expect(judgeCall(config, "run", { cmd: "rm -rf x" }, false).because).toBe("default");
  });

  it("lets read-only tools no rule matches pass, unless readOnlyPass is false", () => {
    const writes = parseProxyConfig({ rules: [{ tools: "write_*" }] });
    expect(judgeCall(writes, "read_file", {}, true)).toEqual({
      action: "allow",
      because: "read-only",
    });
    expect(judgeCall(writes, "read_file", {}, false)).toEqual({
      action: "gate",
      because: "default",
    });
    const strict = parseProxyConfig({ rules: [{ tools: "write_*" }], readOnlyPass: false });
    expect(judgeCall(strict, "read_file", {}, true)).toEqual({
      action: "gate",
      because: "default",
    });
  });

  it("checks the rules before the upstream's read-only mark, which is not trusted", () => {
    const deletes = parseProxyConfig({
      rules: [{ name: "deletes", tools: "delete_*", action: "gate" }],
      default: "allow",
    });
    expect(judgeCall(deletes, "delete_repo", {}, true)).toMatchObject({
      action: "gate",
      because: "deletes",
    });
  });

  it("fails closed on paths with .. segments: no allow by prefix, gate by prefix", () => {
    expect(judgeCall(config, "write_file", { path: "/tmp/../home/u/.ssh/x" }, false)).toEqual({
      action: "allow",
      because: "default",
    });
    expect(judgeCall(config, "write_file", { path: "/tmp/a/../b" }, false).because).toBe("default");
    expect(judgeCall(config, "write_file", { path: "/tmp//a" }, false).because).toBe("scratch");
    const guarded = parseProxyConfig({
      rules: [
        { name: "secrets", tools: "write_*", when: { path: { prefix: "/etc/" } } },
        { name: "scratch", tools: "write_*", when: { path: { prefix: "/tmp/" } }, action: "allow" },
      ],
      default: "gate",
    });
    expect(judgeCall(guarded, "write_file", { path: "/tmp/../etc/passwd" }, false).because).toBe(
      "secrets",
    );
    expect(judgeCall(guarded, "write_file", { path: "/tmp/./x" }, false).because).toBe("scratch");
    expect(judgeCall(guarded, "write_file", { path: 7 }, false).because).toBe("secrets");
  });

  it("fails closed on values of the wrong type or missing: gate rules match, allow rules do not", () => {
    const pay = parseProxyConfig({
      rules: [
        { name: "big", tools: "pay", when: { amount: { gt: 100 } } },
        { name: "cheap", tools: "pay", when: { amount: { lte: 10 } }, action: "allow" },
        { name: "rest", tools: "pay", action: "allow" },
      ],
    });
    expect(judgeCall(pay, "pay", { amount: "5000" }, false).because).toBe("big");
    expect(judgeCall(pay, "pay", {}, false).because).toBe("big");
    expect(judgeCall(pay, "pay", { amount: null }, false).because).toBe("big");
    expect(judgeCall(pay, "pay", { amount: 50 }, false).because).toBe("rest");
    expect(judgeCall(pay, "pay", { amount: 5 }, false).because).toBe("cheap");
    const allowFirst = parseProxyConfig({
      rules: [
        { name: "cheap", tools: "pay", when: { amount: { lte: 10 } }, action: "allow" },
        { name: "label", tools: "pay", when: { memo: { matches: "^ok" } }, action: "allow" },
      ],
    });
    expect(judgeCall(allowFirst, "pay", { amount: "1" }, false).because).toBe("default");
    expect(judgeCall(allowFirst, "pay", { memo: 1 }, false).because).toBe("default");
    expect(judgeCall(allowFirst, "pay", {}, false).action).toBe("gate");
  });

  it("matches globs literally but for * and ?", () => {
    expect(globMatch("fs.*", "fs.write")).toBe(true);
    expect(globMatch("fs.*", "fsxwrite")).toBe(false);
    expect(globMatch("a?c", "abc")).toBe(true);
    expect(globMatch("a?c", "ac")).toBe(false);
  });
});

describe("the upstream's environment", () => {
  it("leaves out Airlock's own settings, such as the server token", () => {
    const env = upstreamEnvironment({
      PATH: "/bin",
      AIRLOCK_TOKEN: "t",
      AIRLOCK_URL: "u",
      HOME: "h",
    });
    expect(env).toEqual({ PATH: "/bin", HOME: "h" });
  });
});
