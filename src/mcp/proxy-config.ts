// The configuration of `airlock mcp-proxy` (airlock-mcp.json): which upstream tool calls open an
// Airlock gate and which pass. Validated with zod before anything starts; a wrong rule is reported
// as one line naming the rule and the problem (`ProxyConfigError`).
import { readFileSync } from "node:fs";
import { z } from "zod";
import { riskSchema } from "../core/schemas.js";

/** A test on one argument (named by a dot path, e.g. `path` or `payment.amount`). */
const predicateSchema = z
  .object({
    /** The argument is a string starting with this text. */
    prefix: z.string().min(1).optional(),
    /** The argument is a number greater than this. */
    gt: z.number().optional(),
    /** The argument is a number at least this. */
    gte: z.number().optional(),
    /** The argument is a number less than this. */
    lt: z.number().optional(),
    /** The argument is a number at most this. */
    lte: z.number().optional(),
    /** The argument equals this JSON value. */
    equals: z.union([z.string(), z.number(), z.boolean(), z.null()]).optional(),
    /** The argument is one of these values. */
    in: z
      .array(z.union([z.string(), z.number(), z.boolean(), z.null()]))
      .min(1)
      .optional(),
    /** The argument is a string this regular expression matches. */
    matches: z
      .string()
      .min(1)
      .max(1000)
      .refine(validRegExp, { message: "is not a valid regular expression" })
      .optional(),
    /** The argument is present (true) or absent (false). */
    present: z.boolean().optional(),
  })
  .strict()
  .refine((p) => Object.values(p).some((v) => v !== undefined), {
    message: "needs at least one test (prefix, gt, gte, lt, lte, equals, in, matches or present)",
  });
export type ArgPredicate = z.infer<typeof predicateSchema>;

const toolPattern = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9_.\-/*?]+$/, "a tool name or glob may hold letters, digits, _ . - / * ?");

export const proxyRuleSchema = z
  .object({
    /** Shown in messages and in the audit; defaults to `rule N`. */
    name: z.string().min(1).max(100).optional(),
    /** Tool names or globs (`*` any run of characters, `?` one) this rule applies to. */
    tools: z.union([toolPattern, z.array(toolPattern).min(1).max(100)]),
    /** Tests on the arguments, all of which must hold for the rule to apply. */
    when: z.record(z.string().min(1).max(200), predicateSchema).optional(),
    /** `gate` (default): a person approves first. `allow`: forwarded at once, audited. */
    action: z.enum(["gate", "allow"]).default("gate"),
    approvers: z.array(z.string().min(1).max(200)).max(100).optional(),
    /** The gate's deadline in seconds. */
    timeoutSeconds: z
      .number()
      .positive()
      .max(366 * 24 * 3600)
      .optional(),
    /** What the deadline decides. @default "reject" */
    onTimeout: z.enum(["reject", "approve"]).optional(),
    risk: riskSchema.optional(),
    /** Running the call twice does no harm: an approved call whose proxy died before it reported
     * the outcome is run again by the same call made again, rather than left for a person. */
    idempotent: z.boolean().optional(),
  })
  .strict();
export type ProxyRule = z.infer<typeof proxyRuleSchema>;

export const proxyConfigSchema = z
  .object({
    $schema: z.string().optional(),
    /** Checked in order; the first rule whose tools and `when` match decides. */
    rules: z.array(proxyRuleSchema).max(1000).default([]),
    /** What happens to a call no rule matches. @default "gate" */
    default: z.enum(["gate", "allow"]).default("gate"),
    /** Tools the upstream marks `readOnlyHint: true` pass without a gate (audited). @default true */
    readOnlyPass: z.boolean().default(true),
    /** Largest accepted arguments, in bytes of JSON. @default 100000 */
    maxArgsBytes: z.number().int().positive().max(10_000_000).default(100_000),
    /** How long an approved call's claim holds with no news from the proxy (it renews it while the
     * call runs). A proxy that dies mid-call leaves a claim that becomes "not known to have run"
     * this long after its last renewal. @default 300 */
    leaseSeconds: z.number().positive().max(86_400).default(300),
  })
  .strict();
export type ProxyConfig = z.output<typeof proxyConfigSchema>;
export type ProxyConfigInput = z.input<typeof proxyConfigSchema>;

/** A configuration that cannot be used; the message is one line. */
export class ProxyConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ProxyConfigError";
  }
}

/** Validates a configuration object; `source` names it in the message (e.g. the file name). */
export function parseProxyConfig(raw: unknown, source = "config"): ProxyConfig {
  const parsed = proxyConfigSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (!issue) throw new ProxyConfigError(`${source}: invalid configuration`);
  const path = issue.path.map(String);
  let where = path.join(".");
  if (path[0] === "rules" && path[1] !== undefined) {
    const index = Number(path[1]);
    const rules = (raw as { rules?: unknown[] }).rules;
    const name = (rules?.[index] as { name?: unknown } | undefined)?.name;
    const label = typeof name === "string" ? `rule ${index + 1} ("${name}")` : `rule ${index + 1}`;
    const rest = path.slice(2).join(".");
    where = rest ? `${label}, ${rest}` : label;
  }
  const message = issue.message.replace(/\s+/g, " ");
  throw new ProxyConfigError(`${source}: ${where ? `${where}: ` : ""}${message}`);
}

/** Reads and validates a configuration file. */
export function loadProxyConfig(file: string): ProxyConfig {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ProxyConfigError(`${file}: cannot be read (${(err as NodeJS.ErrnoException).code})`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ProxyConfigError(`${file}: not valid JSON (${(err as Error).message})`);
  }
  return parseProxyConfig(raw, file);
}

function validRegExp(source: string): boolean {
  try {
    new RegExp(source, "u");
    return true;
  } catch {
    return false;
  }
}
