// Which rule of the proxy's configuration applies to a tool call: read-only tools pass (unless the
// configuration says otherwise), then the first rule whose tools and `when` tests match decides,
// then the configuration's default.
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
  if (readOnly && config.readOnlyPass) return { action: "allow", because: "read-only" };
  for (const [i, rule] of config.rules.entries()) {
    const patterns = typeof rule.tools === "string" ? [rule.tools] : rule.tools;
    if (!patterns.some((p) => globMatch(p, tool))) continue;
    if (rule.when && !Object.entries(rule.when).every(([path, p]) => holds(p, at(args, path))))
      continue;
    return { action: rule.action, because: rule.name ?? `rule ${i + 1}`, rule };
  }
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

function holds(p: ArgPredicate, value: unknown): boolean {
  if (p.present !== undefined && p.present !== (value !== MISSING)) return false;
  if (p.prefix !== undefined && !(typeof value === "string" && value.startsWith(p.prefix)))
    return false;
  const n = typeof value === "number" ? value : Number.NaN;
  if (p.gt !== undefined && !(n > p.gt)) return false;
  if (p.gte !== undefined && !(n >= p.gte)) return false;
  if (p.lt !== undefined && !(n < p.lt)) return false;
  if (p.lte !== undefined && !(n <= p.lte)) return false;
  if (p.equals !== undefined && value !== p.equals) return false;
  if (p.in !== undefined && !p.in.some((v) => v === value)) return false;
  if (
    p.matches !== undefined &&
    !(typeof value === "string" && new RegExp(p.matches, "u").test(value))
  )
    return false;
  return true;
}
