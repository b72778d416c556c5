// Which rule of the proxy's configuration applies to a tool call: the first rule whose tools and
// `when` tests match decides; when none does, a read-only tool passes (unless the configuration says
// otherwise) and any other call takes the configuration's default. The read-only mark comes from the
// upstream, which is not trusted, so it never overrides a rule.
// Tests fail closed: an argument that is missing or of the wrong type for a test (a string where `gt`
// wants a number), or a path with a `..` segment under `prefix`, counts as a match for a gate rule and
// as no match for an allow rule.
import { posix } from "node:path";
import type { ArgPredicate, ProxyConfig, ProxyRule } from "./proxy-config.js";

export interface Verdict {
  action: "gate" | "allow";
  /** Why: the rule's name (`rule N` without one), `read-only` or `default`. */
  because: string;
  rule?: ProxyRule;
}

export function judgeCall(
  config: ProxyConfig,
  tool: string,
  args: Record<string, unknown>,
  readOnly: boolean,
): Verdict {
  for (const [i, rule] of config.rules.entries()) {
    const patterns = typeof rule.tools === "string" ? [rule.tools] : rule.tools;
    if (!patterns.some((p) => globMatch(p, tool))) continue;
    const unsure = rule.action === "gate";
    if (
      rule.when &&
      !Object.entries(rule.when).every(([path, p]) => holds(p, at(args, path), unsure))
    )
      continue;
    return { action: rule.action, because: rule.name ?? `rule ${i + 1}`, rule };
  }
  if (readOnly && config.readOnlyPass) return { action: "allow", because: "read-only" };
  return { action: config.default, because: "default" };
}

/** `*` matches any run of characters, `?` one; everything else literally. */
export function globMatch(pattern: string, name: string): boolean {
  const source = pattern
    .split("")
    .map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[.+^${}()|[\]\\/-]/g, "\\$&")))
    .join("");
  return new RegExp(`^${source}$`, "u").test(name);
}

const MISSING = Symbol("missing");

function at(args: Record<string, unknown>, path: string): unknown {
  let value: unknown = args;
  for (const part of path.split(".")) {
    if (value === null || typeof value !== "object" || !Object.hasOwn(value, part)) return MISSING;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** Whether the test holds for the value; `unsure` is the answer for a value the test cannot judge
 * (missing, of the wrong type, or a path with a `..` segment). */
function holds(p: ArgPredicate, value: unknown, unsure: boolean): boolean {
  if (p.present !== undefined && p.present !== (value !== MISSING)) return false;
  const tests: Array<boolean | undefined> = [];
  if (value === MISSING) {
    const judged = Object.entries(p).some(([k, v]) => k !== "present" && v !== undefined);
    return judged ? unsure : true;
  }
  if (p.prefix !== undefined) tests.push(prefixHolds(p.prefix, value));
  const n = typeof value === "number" && Number.isFinite(value) ? value : undefined;
  if (p.gt !== undefined) tests.push(n === undefined ? undefined : n > p.gt);
  if (p.gte !== undefined) tests.push(n === undefined ? undefined : n >= p.gte);
  if (p.lt !== undefined) tests.push(n === undefined ? undefined : n < p.lt);
  if (p.lte !== undefined) tests.push(n === undefined ? undefined : n <= p.lte);
  if (p.equals !== undefined) tests.push(value === p.equals);
  if (p.in !== undefined) tests.push(p.in.some((v) => v === value));
  if (p.matches !== undefined)
    tests.push(typeof value === "string" ? new RegExp(p.matches, "u").test(value) : undefined);
  return tests.every((t) => (t === undefined ? unsure : t));
}

/** `undefined` when the value is not a string or is a path with a `..` segment. */
function prefixHolds(prefix: string, value: unknown): boolean | undefined {
  if (typeof value !== "string") return undefined;
  if (value.split(/[\\/]/).includes("..")) return undefined;
  return posix.normalize(value).startsWith(prefix);
}
