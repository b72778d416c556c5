// Pattern 5: a two-phase research workflow.
//   Phase A: draft_plan (clarifying questions, expanded queries, outline), no search at all;
//            the session is persisted as `awaiting_approval`; the plan waits at a gate. The
//            reviewer may approve it, or answer its clarifying questions (a `respond` decision):
//            the agent then plans again with the answers (queries focused on them, the answers
//            as the report's scope) and asks for approval of that plan, once (`revisionOf`).
//   Phase B: only after approval: web_search over the local collection, fetch_url, parse_content,
//            then synthesize each outline section and patch the report in bounded updates;
//            the session is persisted again at the end.
// Progress goes out as events: tool_call, tool_result, report_updated, stop, cancelled.
import { randomUUID } from "node:crypto";
import type { ApprovalRequest, RequestInput } from "../../src/core/schemas.js";
import { type Clarification, createPlanner, type Planner } from "../planner/index.js";
import { errorMessage, type Gate, type Log, quiet } from "../shared/gate.js";
import { type Collection, openCollection, type Parsed } from "./collection.js";
import { createEventStream, type EventStream } from "./events.js";
import { chunkText, reportSkeleton } from "./report.js";
import type {
  ClarificationRecord,
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

  const questions = plan.clarifyingQuestions;
  const gateOf = (round: 1 | 2, clarifications: ClarificationRecord[], revisionOf?: string) =>
    planGate({
      researchId,
      query,
      round,
      plan: session.plan as ResearchPlanRecord,
      settings,
      clarifications,
      requester: opts.requester ?? "research-agent",
      timeoutMs: opts.timeoutMs ?? 3_600_000,
      ...(revisionOf === undefined ? {} : { revisionOf }),
    });
  /** Opens the gate, persists the session as waiting, and waits; undefined when the run was
   * cancelled meanwhile (the gate is withdrawn). */
  const ask = async (input: RequestInput): Promise<ApprovalRequest | undefined> => {
    const request = await opts.airlock.request(input);
    stream.attachRequest(request.id);
    session.approval = { request_id: request.id, status: request.status, approved_queries: [] };
    await persist("awaiting_approval");
    log(
      `approval: plan waiting on request ${request.id}; nothing is searched before it is approved`,
    );
    try {
      return request.status === "pending"
        ? await opts.airlock.waitFor(request.id, opts.signal ? { signal: opts.signal } : {})
        : request;
    } catch (err) {
      if (!opts.signal?.aborted) throw err;
      await opts.airlock
        .cancel(request.id, { reason: "the research run was cancelled" })
        .catch(() => undefined);
      return undefined;
    }
  };

  let settled = await ask(gateOf(1, []));
  if (!settled) return cancelled("cancelled while the plan was waiting for approval");
  if (settled.status === "responded") {
    // The reviewer answered the clarifying questions: plan again for their answers, then ask for
    // approval of that plan (the answers are not an approval of anything).
    const clarifications = clarificationsOf(questions, settled.decision?.response);
    const answeredBy = settled.decision?.reviewer;
    session.clarifications = clarifications;
    session.questions = {
      request_id: settled.id,
      ...(answeredBy ? { answered_by: answeredBy } : {}),
    };
    log(
      `questions: ${answeredBy ?? "the reviewer"} answered ${clarifications.length} of ${questions.length}; planning again with the answers`,
    );
    await stream.emit({
      type: "tool_call",
      tool: "decompose_query",
      args: { initial_query: query, clarifications: clarifications.map((c) => ({ ...c })) },
    });
    const replanned = await decomposeQuery(planner, query, 5, clarifications);
    session.plan = {
      // Asked once: the second plan goes to approval without further questions.
      clarifying_questions: [],
      expanded_queries: replanned.expandedQueries,
      outline: replanned.outline,
    };
    await stream.emit({
      type: "tool_result",
      tool: "decompose_query",
      result: { ...session.plan, clarifications: clarifications.map((c) => ({ ...c })) },
    });
    session.report_markdown = reportSkeleton(query, replanned.outline, clarifications);
    log(
      `plan: ${replanned.expandedQueries.length} queries for the answers (${replanned.expandedQueries[0] ?? ""}), outline ${replanned.outline.join(" / ")}`,
    );
    settled = await ask(gateOf(2, clarifications, settled.id));
    if (!settled) return cancelled("cancelled while the plan was waiting for approval");
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
            ...(session.clarifications?.length ? { clarifications: session.clarifications } : {}),
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

interface PlanGateInput {
  researchId: string;
  query: string;
  round: 1 | 2;
  plan: ResearchPlanRecord;
  settings: ResearchSettings;
  clarifications: ClarificationRecord[];
  requester: string;
  timeoutMs: number;
  revisionOf?: string;
}

/** The plan's gate. With clarifying questions the reviewer may answer them instead of approving
 * (`respond`, one text field per question: `answerSchema`); the second round, made for the answers,
 * is a revision of the first and only approved, selected or rejected. */
function planGate(g: PlanGateInput): RequestInput {
  const questions = g.plan.clarifying_questions;
  const respond = questions.length > 0;
  const input: RequestInput = {
    key: `research-two-phase:${g.researchId}:plan${g.round === 1 ? "" : ":answered"}`,
    action: PLAN_ACTION,
    title:
      g.round === 1
        ? `Approve the research plan: ${g.query}`
        : `Approve the research plan (made for your answers): ${g.query}`,
    summary: planSummary(g.plan, g.settings, g.clarifications),
    items: g.plan.expanded_queries.map((q, i) => ({ id: `q${i + 1}`, label: q })),
    args: {
      research_id: g.researchId,
      query: g.query,
      plan: g.plan,
      ...(g.clarifications.length ? { clarifications: g.clarifications } : {}),
    },
    allowed: respond ? ["approve", "reject", "select", "respond"] : ["approve", "reject", "select"],
    requester: g.requester,
    timeoutMs: g.timeoutMs,
    metadata: {
      research_id: g.researchId,
      mainQuery: g.query,
      itemsTitle: "Search queries",
      itemNoun: "queries",
    },
  };
  if (respond) input.responseSchema = answerSchema(questions);
  if (g.revisionOf !== undefined) input.revisionOf = g.revisionOf;
  return input;
}

/** The response to the clarifying questions: `answer_1`, `answer_2`, ... as text, each titled with
 * its question (a form shows one field per question); at least one answered. */
export function answerSchema(questions: readonly string[]): Record<string, unknown> {
  return {
    type: "object",
    title: "Answers to the clarifying questions",
    properties: Object.fromEntries(
      questions.map((q, i) => [
        `answer_${i + 1}`,
        { type: "string", title: q, minLength: 1, maxLength: 2000 },
      ]),
    ),
    additionalProperties: false,
    minProperties: 1,
  };
}

/** The answered questions of a response (`answer_<n>` for question n), in the plan's order. */
export function clarificationsOf(questions: readonly string[], response: unknown): Clarification[] {
  if (response === null || typeof response !== "object" || Array.isArray(response)) return [];
  const answers = response as Record<string, unknown>;
  const out: Clarification[] = [];
  for (const [i, question] of questions.entries()) {
    const answer = answers[`answer_${i + 1}`];
    if (typeof answer === "string" && answer.trim() !== "") {
      out.push({ question, answer: answer.trim() });
    }
  }
  return out;
}

function planSummary(
  plan: ResearchPlanRecord,
  settings: ResearchSettings,
  clarifications: readonly ClarificationRecord[],
): string {
  const asking = plan.clarifying_questions.length > 0;
  return [
    ...(clarifications.length
      ? [
          "Your answers, which this plan was made for:",
          ...clarifications.map((c) => `- ${c.question} **${c.answer}**`),
          "",
        ]
      : []),
    ...(asking
      ? [
          "Clarifying questions (answer them with **Respond** and the agent plans again for your answers, or approve the plan as it is):",
          ...plan.clarifying_questions.map((q) => `- ${q}`),
          "",
        ]
      : []),
    `Outline: ${plan.outline.join(" → ")}`,
    "",
    `After approval the agent searches the local collection with the queries below (select some to run only those), reads at most ${settings.max_sources} sources, and writes the report in updates of at most ${settings.max_update_size} characters. Nothing is searched before approval.`,
  ].join("\n");
}
