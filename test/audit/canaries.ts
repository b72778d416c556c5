// The canary secrets of redaction-canaries.json (shared with the Python client's tests), and a
// request that carries every one of them in its args, summary, preview, metadata, items and title,
// for the tests that follow them through the audit log, the event stream and a webhook.
import { readFileSync } from "node:fs";

export interface KeyedCanary {
  key: string;
  secret: string;
}
export interface ValueCanary {
  id: string;
  /** A text holding the secret (the secret itself for a self-identifying token). */
  text: string;
  secret: string;
  /** The exact result of redacting `text`, the same in TypeScript and Python. */
  redacted: string;
}
export interface Canaries {
  keyed: KeyedCanary[];
  values: ValueCanary[];
  ordinary: string[];
  ordinaryKeys: string[];
}

export const CANARIES = JSON.parse(
  readFileSync(new URL("./redaction-canaries.json", import.meta.url), "utf8"),
) as Canaries;

/** The value canaries in an order for composite texts: a PEM block without its END line hides all
 * that follows it, so it comes last, and every other canary is caught by its own rule. */
const IN_TEXT_ORDER = [
  ...CANARIES.values.filter((c) => c.id !== "pem_truncated"),
  ...CANARIES.values.filter((c) => c.id === "pem_truncated"),
];

/** Every secret, each of which must be absent from whatever leaves. */
export const SECRETS: string[] = [
  ...CANARIES.keyed.map((c) => c.secret),
  ...CANARIES.values.map((c) => c.secret),
];

/** The secrets found in `text`. */
export function leaked(text: string): string[] {
  return SECRETS.filter((s) => text.includes(s));
}

/** Markdown holding every canary: value canaries in prose, lists and code, keyed ones as
 * `key: secret` lines. */
export function markdownWithCanaries(): string {
  const lines = ["## Plan", ""];
  for (const c of CANARIES.keyed) lines.push(`**${c.key}:** ${c.secret}`);
  lines.push("", "```");
  for (const c of CANARIES.keyed) lines.push(`${c.key}: ${c.secret}`);
  lines.push("```", "");
  for (const c of IN_TEXT_ORDER) lines.push(`- step ${c.id}: run ${c.text} then check.`);
  return lines.join("\n");
}

/** An object holding every canary: keyed ones under their keys at several depths, value ones
 * under ordinary keys, in arrays, and as key names. */
export function objectWithCanaries(): Record<string, unknown> {
  const keyed = Object.fromEntries(CANARIES.keyed.map((c) => [c.key, c.secret]));
  return {
    ...keyed,
    nested: { deeper: [{ config: keyed }] },
    notes: CANARIES.values.map((c) => c.text),
    steps: CANARIES.values.map((c) => ({ command: c.text, detail: { text: `then ${c.text}` } })),
    byName: Object.fromEntries(CANARIES.values.map((c) => [c.text, c.id])),
  };
}

/** A request input carrying every canary in each field an agent writes. */
export function requestWithCanaries(
  extra: Record<string, unknown> = {},
): { title: string } & Record<string, unknown> {
  const title = `Rotate ${CANARIES.values
    .filter((c) => ["aws_access_key_id", "github_ghp", "token_space", "bearer"].includes(c.id))
    .map((c) => c.text)
    .join(" and ")}`;
  return {
    title,
    action: "secrets.rotate",
    summary: markdownWithCanaries(),
    preview: markdownWithCanaries(),
    args: objectWithCanaries(),
    metadata: objectWithCanaries(),
    items: CANARIES.values.slice(0, 8).map((c) => ({ id: c.id, label: c.text, detail: c.text })),
    ...extra,
  };
}

/** A decision comment quoting every value canary. */
export function commentWithCanaries(): string {
  return `Approved; note ${IN_TEXT_ORDER.map((c) => c.text).join("; ")}`;
}
