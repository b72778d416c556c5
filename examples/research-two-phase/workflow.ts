// Pattern 5: a two-phase research workflow.
//   Phase A: draft_plan (clarifying questions, expanded queries, outline), no search at all;
//            the session is persisted as `awaiting_approval`; the plan waits at a gate.
//   Phase B: only after approval: web_search over the local collection, fetch_url, parse_content,
//            then synthesize each outline section and patch the report in bounded updates;
//            the session is persisted again at the end.
// Progress goes out as events: tool_call, tool_result, report_updated, stop, cancelled.
import { randomUUID } from "node:crypto";
import type { ApprovalRequest } from "../../src/core/schemas.js";
import { createPlanner, type Planner } from "../planner/index.js";
import { errorMessage, type Gate, type Log, quiet } from "../shared/gate.js";
import { type Collection, openCollection, type Parsed } from "./collection.js";
import { createEventStream, type EventStream } from "./events.js";
import { chunkText, reportSkeleton } from "./report.js";
import type {
  ResearchEvent,
  ResearchPlanRecord,
  ResearchSession,
  ResearchSettings,
  SessionStatus,
} from "./session.js";
import { memorySessionStore, type SessionStore } from "./session-store.js";
import { createExecutionTools, decomposeQuery, type ExecutionTools } from "./tools.js";

export const PLAN_ACTION = "research.execute_plan";

export const DEFAULT_QUERY =
  "Should a small team use SQLite or PostgreSQL for an approval service?";

export const DEFAULT_SETTINGS = {
  max_update_size: 400,
  max_search_results_per_query: 3,
  max_sources: 6,
} as const satisfies ResearchSettings;

/** The longest text synthesized for one section (it then goes in as several bounded updates). */
const SECTION_CHARS = 900;

export interface ResearchTwoPhaseOptions {
  airlock: Gate;
  planner?: Planner;
  log?: Log;
  signal?: AbortSignal;
  /** @default DEFAULT_QUERY */
  query?: string;
  /** Stable id of the session: persistence and the gate's key are idempotent by it. @default random */
  researchId?: string;
  settings?: Partial<ResearchSettings>;
  /** @default in memory */
  sessions?: SessionStore;
  /** The UI's event callback. */
  onEvent?: (event: ResearchEvent) => void;
  /** The plan gate's deadline. @default one hour */
  timeoutMs?: number;
  /** @default the bundled corpus/ */
  collection?: Collection;
  /** Who the gates name as requester. Against a server it must be the agent token's name (the
   * server refuses any other). @default "research-agent" */
  requester?: string;
}

export interface ResearchTwoPhaseResult {
  session: ResearchSession;
  events: readonly ResearchEvent[];
}

export async function runResearchTwoPhase(
  opts: ResearchTwoPhaseOptions,
): Promise<ResearchTwoPhaseResult> {
  const log = opts.log ?? quiet;
  const planner = opts.planner ?? createPlanner();
  const sessions = opts.sessions ?? memorySessionStore();
  const query = opts.query ?? DEFAULT_QUERY;
  const researchId = opts.researchId ?? randomUUID();
  const settings: ResearchSettings = { ...DEFAULT_SETTINGS, ...opts.settings };
  const stream = createEventStream({
    researchId,
    gate: opts.airlock,
    log,
    ...(opts.onEvent ? { onEvent: opts.onEvent } : {}),
  });
  const session: ResearchSession = {
    research_id: researchId,
    status: "planning",
    initial_query: query,
    settings,
    plan: null,
    approval: null,
    sources: [],
    artifacts: [],
    report_markdown: "",
    events: [],
    updated_at: new Date().toISOString(),
  };
  const persist = async (status: SessionStatus) => {
    session.status = status;
    session.updated_at = new Date().toISOString();
    session.events = stream.events.map((e) => ({
      seq: e.seq,
      type: e.type,
      ...("tool" in e ? { tool: e.tool } : {}),
    }));
    await sessions.put(session);
  };
  const end = async (status: SessionStatus, message: string) => {
    log(`${status}: ${message}`);
    await stream.emit({ type: "stop", status, message, report_markdown: session.report_markdown });
    await persist(status);
    return { session, events: stream.events };
  };
  const cancelled = async (reason: string) => {
    log(`cancelled: ${reason}`);
    await stream.emit({ type: "cancelled", reason });
    await persist("cancelled");
    return { session, events: stream.events };
  };

  // ---- Phase A: plan, no search ----
  log(`plan: "${query}" (research ${researchId}, ${planner.name} planner)`);
  await stream.emit({ type: "tool_call", tool: "decompose_query", args: { initial_query: query } });
  const plan = await decomposeQuery(planner, query, 5);
  session.plan = {
    clarifying_questions: plan.clarifyingQuestions,
    expanded_queries: plan.expandedQueries,
    outline: plan.outline,
  };
  await stream.emit({ type: "tool_result", tool: "decompose_query", result: { ...session.plan } });
  session.report_markdown = reportSkeleton(query, plan.outline);
  log(
    `plan: ${plan.clarifyingQuestions.length} clarifying questions, ${plan.expandedQueries.length} queries, outline ${plan.outline.join(" / ")}`,
  );

  const request = await opts.airlock.request({
    key: `research-two-phase:${researchId}:plan`,
    action: PLAN_ACTION,
    title: `Approve the research plan: ${query}`,
    summary: planSummary(session.plan, settings),
    items: plan.expandedQueries.map((q, i) => ({ id: `q${i + 1}`, label: q })),
    args: { research_id: researchId, query, plan: session.plan },
    allowed: ["approve", "reject", "select"],
    requester: opts.requester ?? "research-agent",
    timeoutMs: opts.timeoutMs ?? 3_600_000,
    metadata: {
      research_id: researchId,
      mainQuery: query,
      itemsTitle: "Search queries",
      itemNoun: "queries",
    },
  });
  stream.attachRequest(request.id);
  session.approval = { request_id: request.id, status: request.status, approved_queries: [] };
  await persist("awaiting_approval");
  log(`approval: plan waiting on request ${request.id}; nothing is searched before it is approved`);

  let settled: ApprovalRequest;
  try {
    settled =
      request.status === "pending"
        ? await opts.airlock.waitFor(request.id, opts.signal ? { signal: opts.signal } : {})
        : request;
  } catch (err) {
    if (!opts.signal?.aborted) throw err;
    await opts.airlock
      .cancel(request.id, { reason: "the research run was cancelled" })
      .catch(() => undefined);
    return cancelled("cancelled while the plan was waiting for approval");
  }
  const d = settled.decision;
  session.approval = {
    request_id: settled.id,
    status: settled.status,
    approved_queries: [],
    ...(d?.reviewer ? { reviewer: d.reviewer } : {}),
    ...(d?.comment ? { comment: d.comment } : {}),
  };
  if (settled.status !== "approved") {
    return end(
      "declined",
      `the plan was not approved (${settled.status}${d?.comment ? `: ${d.comment}` : ""}); nothing was searched`,
    );
  }

  // ---- Phase B: execute the approved plan ----
  let tools: ExecutionTools;
  try {
    tools = createExecutionTools(settled, opts.collection ?? openCollection());
  } catch (err) {
    return end("failed", errorMessage(err));
  }
  session.approval.approved_queries = [...tools.approvedQueries];
  log(
    `approval: approved by ${d?.reviewer ?? "policy"}, ${tools.approvedQueries.length} of ${plan.expandedQueries.length} queries`,
  );
  await persist("running");
  try {
    const outcome = await execute(session, tools, planner, stream, log, opts.signal);
    if (outcome === "cancelled") return cancelled("cancelled during execution");
  } catch (err) {
    return end("failed", `the research stopped: ${errorMessage(err)}`);
  }
  return end(
    "completed",
    `report of ${session.report_markdown.length} characters from ${session.sources.length} sources`,
  );
}

/** Phase B proper: search, fetch and parse, then synthesize and patch section by section. */
async function execute(
  session: ResearchSession,
  tools: ExecutionTools,
  planner: Planner,
  stream: EventStream,
  log: Log,
  signal: AbortSignal | undefined,
): Promise<"done" | "cancelled"> {
  const { settings } = session;
  // web_search, URLs deduplicated across queries
  const found = new Map<string, { title: string; snippet: string; queries: string[] }>();
  for (const query of tools.approvedQueries) {
    if (signal?.aborted) return "cancelled";
    const args = { query, max_results: settings.max_search_results_per_query };
    await stream.emit({ type: "tool_call", tool: "web_search", args });
    const hits = tools.webSearch(query, settings.max_search_results_per_query);
    let fresh = 0;
    for (const h of hits) {
      const seen = found.get(h.url);
      if (seen) seen.queries.push(query);
      else if (found.size < settings.max_sources) {
        found.set(h.url, { title: h.title, snippet: h.snippet, queries: [query] });
        fresh++;
      }
    }
    await stream.emit({
      type: "tool_result",
      tool: "web_search",
      result: {
        query,
        results: hits.map((h) => ({ url: h.url, title: h.title, snippet: h.snippet })),
      },
    });
    log(`web_search "${query}": ${hits.length} results, ${fresh} new`);
  }

  // fetch_url + parse_content
  const parsedByRef = new Map<number, Parsed>();
  for (const [url, hit] of found) {
    if (signal?.aborted) return "cancelled";
    await stream.emit({ type: "tool_call", tool: "fetch_url", args: { url } });
    let parsed: Parsed;
    try {
      const fetched = tools.fetchUrl(url);
      await stream.emit({
        type: "tool_result",
        tool: "fetch_url",
        result: { url, content_type: fetched.content_type, bytes: fetched.bytes },
      });
      await stream.emit({
        type: "tool_call",
        tool: "parse_content",
        args: { url, content_type: fetched.content_type },
      });
      parsed = tools.parseContent(fetched);
      await stream.emit({
        type: "tool_result",
        tool: "parse_content",
        result: {
          url,
          title: parsed.title,
          sections: parsed.sections.length,
          chars: parsed.text.length,
        },
      });
      const ref = session.sources.length + 1;
      session.sources.push({
        ref,
        url,
        title: parsed.title,
        retrieved_at: new Date().toISOString(),
        snippet: hit.snippet,
        found_by: hit.queries,
      });
      session.artifacts.push({
        name: url.replace(/^corpus:\/\//, ""),
        kind: fetched.content_type === "text/markdown" ? "markdown" : "text",
        source_url: url,
        bytes: fetched.bytes,
        sections: parsed.sections.length,
      });
      parsedByRef.set(ref, parsed);
      log(
        `fetch_url + parse_content ${url}: "${parsed.title}", ${parsed.sections.length} sections`,
      );
    } catch (err) {
      // One unreadable source does not stop the research; it is reported and skipped.
      await stream.emit({
        type: "tool_result",
        tool: "fetch_url",
        result: { url, error: errorMessage(err) },
      });
      log(`fetch_url ${url}: skipped: ${errorMessage(err)}`);
    }
  }

  // synthesize + update_report, in chunks of at most max_update_size
  const notes = session.sources.map((s) => ({
    ref: s.ref,
    title: s.title,
    text: parsedByRef.get(s.ref)?.text ?? s.snippet,
  }));
  const outline = session.plan?.outline ?? [];
  const sections = [...outline, "Sources"];
  for (const heading of sections) {
    if (signal?.aborted) return "cancelled";
    const text =
      heading === "Sources"
        ? sourcesList(session)
        : await planner.synthesize({
            query: session.initial_query,
            heading,
            outline,
            notes,
            reportSoFar: session.report_markdown,
            maxChars: SECTION_CHARS,
          });
    const chunks = chunkText(text, settings.max_update_size);
    for (const [i, chunk] of chunks.entries()) {
      if (signal?.aborted) return "cancelled";
      await stream.emit({
        type: "tool_call",
        tool: "update_report",
        args: { section: heading, chars: chunk.length, max_update_size: settings.max_update_size },
      });
      // The state is updated before the result goes out, so the UI never runs ahead of the context.
      session.report_markdown = tools.updateReport(
        session.report_markdown,
        heading,
        chunk,
        settings.max_update_size,
      );
      await stream.emit({
        type: "tool_result",
        tool: "update_report",
        result: { section: heading, new_report_markdown: session.report_markdown },
      });
      await stream.emit({
        type: "report_updated",
        section: heading,
        chunk: i + 1,
        report_markdown: session.report_markdown,
      });
    }
    log(`update_report "${heading}": ${chunks.length} update${chunks.length === 1 ? "" : "s"}`);
  }
  return "done";
}

function sourcesList(session: ResearchSession): string {
  if (session.sources.length === 0) return "_No sources were found._";
  return session.sources.map((s) => `${s.ref}. [${s.title}](${s.url})`).join("\n");
}

function planSummary(plan: ResearchPlanRecord, settings: ResearchSettings): string {
  return [
    "Clarifying questions (answer them in a comment, or approve the plan as it is):",
    ...plan.clarifying_questions.map((q) => `- ${q}`),
    "",
    `Outline: ${plan.outline.join(" → ")}`,
    "",
    `After approval the agent searches the local collection with the queries below (select some to run only those), reads at most ${settings.max_sources} sources, and writes the report in updates of at most ${settings.max_update_size} characters. Nothing is searched before approval.`,
  ].join("\n");
}
