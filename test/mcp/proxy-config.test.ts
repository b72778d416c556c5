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
    expect(judgeCall(config, "pay", { amount: "1000" }, false).because).toBe("small");
    expect(judgeCall(config, "deploy", { target: { env: "prod" } }, false).because).toBe("nested");
    expect(judgeCall(config, "deploy", { target: { env: "dev" } }, false).because).toBe("default");
    expect(judgeCall(config, "run", { cmd: "rm -rf x", force: true }, false).because).toBe("regex");
    expect(judgeCall(config, "run", { cmd: "rm -rf x" }, false).because).toBe("default");
  });

  it("lets read-only tools pass unless readOnlyPass is false", () => {
    const gateAll = parseProxyConfig({ rules: [{ tools: "*" }] });
    expect(judgeCall(gateAll, "read_file", {}, true)).toEqual({
      action: "allow",
      because: "read-only",
    });
    expect(judgeCall(gateAll, "read_file", {}, false).action).toBe("gate");
    const strict = parseProxyConfig({ rules: [{ tools: "*" }], readOnlyPass: false });
    expect(judgeCall(strict, "read_file", {}, true)).toMatchObject({
      action: "gate",
      because: "rule 1",
    });
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
