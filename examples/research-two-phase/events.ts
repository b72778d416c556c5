// The event stream of a research run: each event is numbered, kept, handed to the UI callback, and,
// when the gate can `record` (the in-process engine), appended to the audit log as a `notified` event
// of the plan's request, so the request's page shows the run's progress as a live report.
import { errorMessage, type Gate, type Log } from "../shared/gate.js";
import type { ResearchEvent, ResearchEventInput } from "./session.js";

export interface EventStream {
  emit(event: ResearchEventInput): Promise<ResearchEvent>;
  readonly events: readonly ResearchEvent[];
  /** Later events are recorded against this request. */
  attachRequest(requestId: string): void;
}

export function createEventStream(opts: {
  researchId: string;
  gate: Gate;
  log: Log;
  onEvent?: (event: ResearchEvent) => void;
}): EventStream {
  const events: ResearchEvent[] = [];
  let requestId: string | undefined;
  let recordFailed = false;
  return {
    events,
    attachRequest(id) {
      requestId = id;
    },
    async emit(input) {
      const event = {
        ...input,
        research_id: opts.researchId,
        seq: events.length + 1,
        at: Date.now(),
      } as ResearchEvent; // input is one member of the union; the spread loses which one
      events.push(event);
      opts.onEvent?.(event);
      if (!recordFailed) {
        try {
          await opts.gate.record({
            type: "notified",
            actor: "research-agent",
            ...(requestId ? { requestId } : {}),
            data: { channel: "research-events", ...auditSummary(event) },
          });
        } catch (err) {
          // Progress is not an action: a failing audit sink is reported once and the run goes on.
          recordFailed = true;
          opts.log(`events: could not record progress in the audit log: ${errorMessage(err)}`);
        }
      }
      return event;
    },
  };
}

/** The most of the report one event carries to the audit log (the inbox and the card show the
 * latest one as the live report). */
const REPORT_IN_EVENT_CHARS = 20_000;

/** What the audit keeps of an event: its kind, the tool and its arguments, and with a report
 * update or the stop the report so far (bounded), which the request's page shows as it grows. */
function auditSummary(e: ResearchEvent): Record<string, unknown> {
  const base = { research_id: e.research_id, seq: e.seq, event: e.type };
  switch (e.type) {
    case "tool_call":
      return { ...base, tool: e.tool, args: e.args };
    case "tool_result":
      return { ...base, tool: e.tool };
    case "report_updated":
      return {
        ...base,
        section: e.section,
        chunk: e.chunk,
        report_chars: e.report_markdown.length,
        report_markdown: e.report_markdown.slice(0, REPORT_IN_EVENT_CHARS),
      };
    case "stop":
      return {
        ...base,
        status: e.status,
        message: e.message,
        report_markdown: e.report_markdown.slice(0, REPORT_IN_EVENT_CHARS),
      };
    case "cancelled":
      return { ...base, reason: e.reason };
  }
}
