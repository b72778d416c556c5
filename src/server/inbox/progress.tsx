// An agent's progress on a request, as a document: the report as it grows (the latest report an
// event carried, rendered as markdown), the latest tool calls, and the older ones folded. Agents
// report progress as `notified` audit events (`POST /v1/audit`, or `record` in process): each with
// `data.event` (`tool_call`, `tool_result`, `report_updated`, `stop`, `cancelled`, `progress`),
// `tool` and `args` for a tool call, and `report_markdown` (the whole report so far) when the report
// changed. The audit trail keeps the raw events; the page folds them there.
import { raw } from "hono/html";
import type { FC } from "hono/jsx";
import type { AuditEvent } from "../../core/schemas.js";
import type { Airlock } from "../../engine/engine.js";
import { bounded, renderMarkdownOnce } from "./markdown.js";

/** The kinds of progress event an agent reports. */
const PROGRESS_EVENTS = new Set([
  "tool_call",
  "tool_result",
  "report_updated",
  "stop",
  "cancelled",
  "progress",
]);

/** Tool calls shown open; older ones are folded. */
export const LATEST_TOOL_CALLS = 3;

/** Whether an audit event is an agent's progress (not a notification of people, nor a card token). */
export function isProgress(e: AuditEvent): boolean {
  if (e.type !== "notified") return false;
  const kind = e.data.event;
  return (
    (typeof kind === "string" && PROGRESS_EVENTS.has(kind)) ||
    typeof e.data.report_markdown === "string"
  );
}

export interface ToolCall {
  seq: number;
  at: number;
  tool: string;
  /** The call's arguments in one line. */
  args?: string | undefined;
  /** Whether a result came back for it. */
  done: boolean;
}

export interface ProgressDoc {
  /** The latest report, and the event that carried it. */
  report?: { markdown: string; seq: number; at: number; section?: string | undefined };
  toolCalls: ToolCall[];
  /** How the run ended, when it did. */
  end?: { status: string; message?: string | undefined; at: number };
  events: number;
  /** The last progress event's time. */
  updatedAt?: number;
}

function oneLine(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  const text = typeof v === "string" ? v : JSON.stringify(v);
  if (text === undefined) return undefined;
  return text.length > 160 ? `${text.slice(0, 159)}…` : text;
}

/** The progress document of a request, from its audit events (any order; read by `seq`). */
export function progressOf(events: AuditEvent[]): ProgressDoc | undefined {
  const mine = events.filter(isProgress).sort((a, b) => a.seq - b.seq);
  if (mine.length === 0) return undefined;
  const doc: ProgressDoc = { toolCalls: [], events: mine.length };
  for (const e of mine) {
    const d = e.data;
    doc.updatedAt = e.at;
    if (typeof d.report_markdown === "string") {
      doc.report = {
        markdown: d.report_markdown,
        seq: e.seq,
        at: e.at,
        section: typeof d.section === "string" ? d.section : undefined,
      };
    }
    switch (d.event) {
      case "tool_call":
        doc.toolCalls.push({
          seq: e.seq,
          at: e.at,
          tool: typeof d.tool === "string" ? d.tool : "tool",
          args: oneLine(d.args),
          done: false,
        });
        break;
      case "tool_result": {
        const open = [...doc.toolCalls].reverse().find((c) => !c.done && c.tool === d.tool);
        if (open) open.done = true;
        break;
      }
      case "stop":
        doc.end = {
          status: typeof d.status === "string" ? d.status : "stopped",
          message: typeof d.message === "string" ? d.message : undefined,
          at: e.at,
        };
        break;
      case "cancelled":
        doc.end = {
          status: "cancelled",
          message: typeof d.reason === "string" ? d.reason : undefined,
          at: e.at,
        };
        break;
    }
  }
  return doc;
}

/** Pages of 1,000 audit events read for a request's progress. */
const PROGRESS_PAGES = 10;

/** The progress document of a request, read from its audit events (the newest included: the
 * report is the latest one an event carried). */
export async function readProgress(
  airlock: Pick<Airlock, "audit">,
  requestId: string,
): Promise<ProgressDoc | undefined> {
  const events: AuditEvent[] = [];
  let after: number | undefined;
  for (let i = 0; i < PROGRESS_PAGES; i++) {
    const page = await airlock.audit({
      requestId,
      limit: 1000,
      ...(after === undefined ? {} : { after }),
    });
    events.push(...page);
    const last = page[page.length - 1];
    if (page.length < 1000 || !last) break;
    after = last.seq;
  }
  return progressOf(events);
}

const CallLine: FC<{ call: ToolCall }> = ({ call }) => (
  <li data-seq={String(call.seq)}>
    <code>{call.tool}</code>
    {call.args ? <span class="muted"> {call.args}</span> : null}
    {call.done ? null : <span class="badge running">running</span>}
  </li>
);

/** The live report: refreshed by the page script (assets.ts) as progress events arrive. */
export const LiveReport: FC<{ requestId: string; doc: ProgressDoc | undefined }> = ({
  requestId,
  doc,
}) => {
  if (!doc) return <section id="live-report" hidden data-events="0" />;
  const calls = doc.toolCalls;
  const latest = calls.slice(-LATEST_TOOL_CALLS).reverse();
  const older = calls.slice(0, Math.max(0, calls.length - LATEST_TOOL_CALLS)).reverse();
  const shown = doc.report ? bounded(doc.report.markdown) : undefined;
  const state = doc.end
    ? `${doc.end.status}${doc.end.message ? `: ${doc.end.message}` : ""}`
    : "running";
  return (
    <section
      class="card live-report"
      id="live-report"
      aria-label="the agent's report"
      data-events={String(doc.events)}
      data-state={doc.end ? doc.end.status : "running"}
    >
      <h2>
        The agent's report{" "}
        <span class={`badge ${doc.end ? `status-${doc.end.status}` : "running"}`}>{state}</span>
      </h2>
      <p class="muted said">
        Written by the agent as it works (its own words, not checked by Airlock)
        {doc.report?.section ? `; last updated: ${doc.report.section}` : ""}.
      </p>
      {shown && doc.report ? (
        <div class="report">
          <div class="markdown">
            {raw(renderMarkdownOnce(`${requestId}:report:${doc.report.seq}`, shown.text))}
          </div>
          {shown.omitted > 0 ? (
            <p class="muted truncated">
              … {shown.omitted.toLocaleString("en")} more characters not shown.
            </p>
          ) : null}
        </div>
      ) : (
        <p class="muted">No report yet.</p>
      )}
      {calls.length ? (
        <div class="tool-calls">
          <h3>
            Latest tool calls <span class="muted">({String(calls.length)} in all)</span>
          </h3>
          <ol class="calls" id="latest-calls">
            {latest.map((c) => (
              <CallLine call={c} />
            ))}
          </ol>
          {older.length ? (
            <details id="older-calls">
              <summary>{String(older.length)} earlier tool calls</summary>
              <ol class="calls">
                {older.map((c) => (
                  <CallLine call={c} />
                ))}
              </ol>
            </details>
          ) : null}
        </div>
      ) : null}
    </section>
  );
};
