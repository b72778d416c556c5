// How the command line prints: JSON for scripts, short aligned text for people, and one line on
// stderr for errors. What agents wrote passes through `terminalSafe` (control characters and escape
// sequences shown as harmless stand-ins), so it cannot clear, retitle or overwrite the terminal.
import { argsJson } from "../channels/view-fit.js";
import { reviewViewOf, viewDigestOf } from "../core/review-view.js";
import type { ApprovalRequest } from "../core/schemas.js";
import { isPending } from "../core/state.js";
import { terminalSafe, terminalSafeJson } from "../reply/format.js";

export { terminalSafe } from "../reply/format.js";

export function printJson(value: unknown): void {
  process.stdout.write(`${terminalSafeJson(JSON.stringify(value, null, 2))}\n`);
}

/** One line for the terminal: control characters shown, line breaks included. */
export function safeLine(text: string): string {
  return terminalSafe(text);
}

/** The decision as a waiting script sees it. */
export function decisionSummary(r: ApprovalRequest): Record<string, unknown> {
  const d = r.decision;
  const selected = d?.selected ?? [];
  return {
    id: r.id,
    title: r.title,
    status: r.status,
    outcome: d?.outcome ?? null,
    method: d?.method ?? null,
    selected,
    selectedItems: r.items.filter((i) => selected.includes(i.id)),
    comment: d?.comment ?? null,
    reviewer: d?.reviewer ?? null,
    channel: d?.channel ?? null,
    decidedAt: d ? new Date(d.decidedAt).toISOString() : null,
    argsHash: d?.argsHash ?? null,
    ...(d?.editedArgs ? { editedArgs: d.editedArgs } : {}),
    ...(d?.outcome === "responded" ? { response: d.response ?? null } : {}),
  };
}

/** Exit codes of `airlock request --wait`: 0 approved, 1 rejected or cancelled, 2 timed out, 3 revise,
 * 5 responded (a reviewer answered: the answer is `response` in the printed JSON; 4 is a usage or
 * refusal error of the command itself). */
export function exitCodeFor(r: ApprovalRequest): number {
  switch (r.status) {
    case "approved":
      return 0;
    case "timed_out":
      return 2;
    case "revise":
      return 3;
    case "responded":
      return 5;
    default:
      return 1;
  }
}

export function relativeTime(at: number, now: number): string {
  const s = Math.round((at - now) / 1000);
  const abs = Math.abs(s);
  const text =
    abs < 90 ? `${abs}s` : abs < 5400 ? `${Math.round(abs / 60)}m` : `${Math.round(abs / 3600)}h`;
  return s >= 0 ? `in ${text}` : `${text} ago`;
}

export function table(rows: string[][]): string {
  const widths: number[] = [];
  rows = rows.map((row) => row.map((c) => terminalSafe(c)));
  for (const row of rows) {
    for (const [i, c] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, c.length);
  }
  return rows
    .map((row) =>
      row
        .map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

export function describeRequest(r: ApprovalRequest, now: number): string {
  const one = (s: string) => terminalSafe(s);
  const lines = [
    one(r.title),
    `  id:          ${one(r.id)}`,
    `  status:      ${r.status}`,
    `  action:      ${one(r.action)}`,
    `  requester:   ${one(r.requester)}`,
    `  approvers:   ${r.approvers.length ? one(r.approvers.join(", ")) : "(anyone but the requester)"}`,
    `  level:       ${r.level}${r.risk ? `, risk ${r.risk}` : ""}${r.confidence !== undefined ? `, confidence ${r.confidence}` : ""}`,
    `  created:     ${new Date(r.createdAt).toISOString()}`,
  ];
  if (r.deadline !== undefined) {
    lines.push(
      `  deadline:    ${new Date(r.deadline).toISOString()} (${relativeTime(r.deadline, now)})`,
    );
  }
  if (r.quorum > 1) lines.push(`  quorum:      ${r.quorum}`);
  if (r.revisionOf) lines.push(`  revision of: ${one(r.revisionOf)}`);
  // What follows is the request's review view (core/review-view.ts), as every door shows it; its
  // digest goes with a decision (`airlock decide ID … --view-digest HEX`).
  const view = reviewViewOf(r);
  if (isPending(r)) lines.push(`  view digest: ${viewDigestOf(r)}`);
  const block = (heading: string, text: string) =>
    lines.push(
      "",
      `  ${heading}`,
      ...terminalSafe(text, { multiline: true })
        .split("\n")
        .map((l) => `    ${l}`),
    );
  if (view.question?.trim()) block("question:", view.question);
  if (view.command?.trim()) block("command:", view.command);
  if (view.agentSummary?.trim()) {
    block("the agent says (its own words, not checked by Airlock):", view.agentSummary.trimEnd());
  }
  if (Object.keys(view.args).length) {
    block("exact arguments (what runs if approved):", argsJson(view.args));
  } else lines.push("", "  exact arguments (what runs if approved): none");
  if (view.preview?.trim()) block("preview:", view.preview.trimEnd());
  if (view.items.length) {
    lines.push("", "  items:");
    view.items.forEach((it, i) => {
      const mark = r.decision?.selected?.includes(it.id) ? "x" : " ";
      lines.push(`   [${mark}] ${i + 1}. ${one(it.label)}  (${one(it.id)})`);
      if (it.detail?.trim()) lines.push(`          ${one(it.detail)}`);
    });
  }
  if (r.allowed.includes("respond") && r.status === "pending") {
    lines.push(
      `  answerable:  ${r.responseSchema ? `a response fitting ${terminalSafeJson(JSON.stringify(r.responseSchema))}` : "any response"} (airlock decide ${one(r.id)} respond --response JSON)`,
    );
  }
  for (const d of r.decisions) {
    lines.push(
      "",
      `  ${d.outcome} (${d.method}) by ${one(d.reviewer)} via ${d.channel} at ${new Date(d.decidedAt).toISOString()}${d.comment ? `: ${one(d.comment)}` : ""}`,
    );
    if (d.response !== undefined) {
      lines.push(`  response: ${terminalSafeJson(JSON.stringify(d.response) ?? "null")}`);
    }
  }
  return lines.join("\n");
}
