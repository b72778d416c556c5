// One request, as a reviewer decides it, rendered from its review view (core/review-view.ts). The first
// screen holds what a person decides on: the title, risk and countdown, the agent's words labelled as
// such, the exact arguments (canonical, pretty-printed JSON: what runs if approved; open unless long),
// the items or the diff, and the buttons (kept in view while the reviewer scrolls a long plan). Every
// decision form carries the digest of the view the page showed (`viewDigest`): a decision on a view
// that changed since is refused and the page shown again. Then the revision history and the audit
// trail.
import { raw } from "hono/html";
import type { FC } from "hono/jsx";
import { argsJson } from "../../../channels/view-fit.js";
import { needsConfirmation } from "../../../core/danger.js";
import { buttonLabel } from "../../../core/labels.js";
import { presentationOf } from "../../../core/presentation.js";
import { type ReviewView, reviewViewOf, viewDigestOf } from "../../../core/review-view.js";
import type { ApprovalRequest, AuditEvent } from "../../../core/schemas.js";
import { isPending } from "../../../core/state.js";
import { changes, type DiffLine, looksLikeDiff, parseDiff } from "../diff.js";
import { EditFields, type FieldSpec, fieldChanges, fieldName, inline } from "../edit-form.js";
import { bounded, MAX_SHOWN_CHARS, renderMarkdownOnce } from "../markdown.js";
import { isProgress, LiveReport, type ProgressDoc } from "../progress.js";
import { Badge, Countdown } from "./queue.js";

export interface FormError {
  form: "decide" | "revise" | "edit" | "cancel" | "respond";
  message: string;
  /** What the reviewer typed or ticked, shown again so nothing is lost. */
  argsText?: string;
  /** The edit form's fields as posted (argument name → text), shown again after a refusal. */
  posted?: Record<string, string | undefined>;
  /** The argument the refusal is about (the engine's `field`, without `editedArgs.`), whose field
   * shows the message. */
  field?: string;
  comment?: string;
  selected?: string[];
}

/** A second step before a decision is recorded: a high-risk approval, or "approve all" pressed while
 * some items were ticked. The reviewer's comment and ticks are carried along. */
export interface Confirmation {
  message: string;
  choices: { action: "approve" | "approve_selected" | "edit"; label: string }[];
  comment: string;
  selected: string[];
  /** The edited arguments, when the approval to confirm is an edit. */
  args?: string;
  /** The edit form's fields as posted (argument name → text), when the edit came from them: they
   * are posted again, so a refusal after the confirmation shows beside its field. */
  fields?: Record<string, string | undefined>;
}

export interface PanelProps {
  request: ApprovalRequest;
  csrf: string;
  /** False when this reviewer may see but not decide (e.g. their own request). */
  canDecide: boolean;
  whyNot?: string | undefined;
  error?: FormError | undefined;
  /** Shown when a decision lost the race to someone else's. */
  notice?: string | undefined;
  confirm?: Confirmation | undefined;
  /** Which schema the edited arguments are checked against, in words. */
  schemaNote?: string | undefined;
  /** The edit form's fields (edit-form.tsx), from the request's schema or its arguments; absent:
   * the JSON editor alone. */
  editFields?: FieldSpec[] | undefined;
  /** The agent's progress on this request (progress.tsx), shown as its live report. */
  progress?: ProgressDoc | undefined;
  /** The answer form's fields (from an object `responseSchema`); absent: one text box. */
  responseFields?: FieldSpec[] | undefined;
  /** The version this request was revised into, when the reviewer asked for a revision. */
  successor?: ApprovalRequest | undefined;
  /** The version this one revises (`revisionOf`), to show what changed. */
  previous?: ApprovalRequest | undefined;
}

/** Whether asking for a revision needs a comment (`revisionCommentRequired`, false by default). */
export function revisionCommentRequired(r: ApprovalRequest): boolean {
  return r.revisionCommentRequired === true;
}

/** Items can be ticked when the request allows approving a selection. */
export function selectable(r: ApprovalRequest): boolean {
  return r.items.length > 0 && r.allowed.includes("select");
}

// --- small pieces -----------------------------------------------------------------------------------

/** A moment, in the reader's local time (the script rewrites the UTC fallback). */
export const Time: FC<{ at: number }> = ({ at }) => {
  const iso = new Date(at).toISOString();
  return (
    <time datetime={iso} data-local="">
      {`${iso.slice(0, 16).replace("T", " ")} UTC`}
    </time>
  );
};

const STATUS_WORDS: Record<string, string> = {
  pending: "pending",
  approved: "approved",
  rejected: "rejected",
  revise: "revision requested",
  responded: "answered",
  timed_out: "timed out",
  cancelled: "cancelled",
};
export const statusWords = (s: string) => STATUS_WORDS[s] ?? s.replace("_", " ");

/** How a decision was reached, when the status alone does not say it. */
const METHOD_WORDS: Record<string, string> = {
  approve_all: "everything",
  select: "a selection",
  edit: "edited arguments",
  skip: "skipped",
  auto: "automatic",
  no_items: "nothing to approve",
  timeout: "deadline passed",
  escalated: "escalation",
  error: "error",
  parse_error: "unreadable reply",
  respond: "an answer",
};
const methodWords = (m: string): string | undefined =>
  Object.hasOwn(METHOD_WORDS, m) ? METHOD_WORDS[m] : undefined;

const Truncated: FC<{ omitted: number }> = ({ omitted }) =>
  omitted > 0 ? (
    <p class="muted truncated">
      … {omitted.toLocaleString("en")} more characters not shown (the inbox shows the first part of
      long texts).
    </p>
  ) : null;

const Markdown: FC<{ cacheKey: string; source: string }> = ({ cacheKey, source }) => {
  const shown = bounded(source);
  return (
    <>
      <div class="markdown">{raw(renderMarkdownOnce(cacheKey, shown.text))}</div>
      <Truncated omitted={shown.omitted} />
    </>
  );
};

export const DiffView: FC<{ lines: DiffLine[]; label?: string }> = ({ lines, label }) => (
  <pre class="diff" title={label ?? "unified diff"}>
    {lines.map((l) => (
      <span class={l.kind}>{l.text || " "}</span>
    ))}
  </pre>
);

export const Preview: FC<{ request: ApprovalRequest }> = ({ request: r }) => {
  const text = r.preview ?? "";
  if (!looksLikeDiff(text)) {
    return <Markdown cacheKey={`${r.id}:${r.version}:preview`} source={text} />;
  }
  const shown = bounded(text, MAX_SHOWN_CHARS);
  return (
    <>
      <DiffView lines={parseDiff(shown.text)} />
      <Truncated omitted={shown.omitted} />
    </>
  );
};

/** The request as text, to compare one version with the next. */
function asText(r: ApprovalRequest): string {
  return [
    `Title: ${r.title}`,
    ...(r.summary ? ["", "Summary:", r.summary] : []),
    ...(r.items.length
      ? ["", "Items:", ...r.items.map((i) => `- ${i.label}${i.detail ? ` — ${i.detail}` : ""}`)]
      : []),
    "",
    "Arguments:",
    JSON.stringify(r.args, null, 2),
    ...(r.preview ? ["", "Preview:", r.preview] : []),
  ].join("\n");
}

const Changes: FC<{ before: string; after: string; names: [string, string]; what: string }> = ({
  before,
  after,
  names,
  what,
}) => {
  const lines = changes(before, after, names);
  if (lines === undefined) {
    return <p class="muted">{what}: too large or too different to compare here.</p>;
  }
  if (lines.length === 0) return <p class="muted">{what}: no change.</p>;
  return <DiffView lines={lines} label={what} />;
};

// --- what the request asks --------------------------------------------------------------------------

/** What the agent gave the reviewer to weigh: the main question (patterns 1 and 5), its progress
 * so far and its estimates of time and cost. */
const Context: FC<{ request: ApprovalRequest }> = ({ request: r }) => {
  const { question, progress, estimate } = presentationOf(r);
  const { minutes, cost } = estimate;
  const figures = Object.entries(progress);
  if (!question && !figures.length && minutes === undefined && cost === undefined) return null;
  return (
    <dl class="context">
      {question ? (
        <>
          <dt>Main question</dt>
          <dd>{question}</dd>
        </>
      ) : null}
      {figures.map(([label, value]) => (
        <>
          <dt>{label}</dt>
          <dd>{String(value)}</dd>
        </>
      ))}
      {minutes !== undefined || cost !== undefined ? (
        <>
          <dt>Estimate</dt>
          <dd>
            {[
              minutes !== undefined ? `about ${minutes} min` : "",
              cost !== undefined ? `$${cost.toFixed(2)}` : "",
            ]
              .filter(Boolean)
              .join(", ")}
          </dd>
        </>
      ) : null}
    </dl>
  );
};

/** The critiques (pattern 1's reflection; on older requests `metadata.research.critiques`) that the
 * summary does not already list (it lists the high-priority ones). */
const OtherCritiques: FC<{ request: ApprovalRequest }> = ({ request: r }) => {
  const typed = presentationOf(r).critiques;
  const research = r.metadata.research as { critiques?: unknown } | undefined;
  const stored = typed.length
    ? typed
    : Array.isArray(research?.critiques)
      ? research.critiques
      : [];
  const critiques = stored
    .map((c) => c as { issue?: unknown; importance?: unknown })
    .filter((c) => typeof c.issue === "string" && !(r.summary ?? "").includes(c.issue))
    .slice(0, 20);
  if (!critiques.length) return null;
  return (
    <section class="card critiques" aria-label="other critiques">
      <h2>Other critiques</h2>
      <ul>
        {critiques.map((c) => (
          <li>
            {String(c.issue)}
            {typeof c.importance === "string" ? <span class="muted"> ({c.importance})</span> : null}
          </li>
        ))}
      </ul>
    </section>
  );
};

/** Risk, countdown and status in one line under the title. */
const Strip: FC<{ request: ApprovalRequest }> = ({ request: r }) => (
  <p class="strip">
    {r.risk ? <span class={`badge risk-${r.risk}`}>{r.risk} risk</span> : null}
    <span class={`status-${r.status}`}>{statusWords(r.status)}</span>
    {isPending(r) ? <Countdown deadline={r.deadline} /> : null}
    <span class="muted">
      {r.action} · from {r.requester}
    </span>
  </p>
);

const Items: FC<{ request: ApprovalRequest; ticks: boolean; checked: string[] }> = ({
  request: r,
  ticks,
  checked,
}) => {
  if (!r.items.length) return null;
  const title = presentationOf(r).labels.items ?? "Items";
  const chosen = r.decision?.selected;
  return (
    <fieldset class="items">
      <legend>
        {title} ({r.items.length})
      </legend>
      {ticks ? (
        r.items.map((it, i) => (
          <label>
            <input type="checkbox" name="items" value={it.id} checked={checked.includes(it.id)} />{" "}
            {i + 1}. {it.label}
            {it.detail ? <span class="muted"> — {it.detail}</span> : null}
          </label>
        ))
      ) : (
        <ol>
          {r.items.map((it) => (
            <li class={chosen && !chosen.includes(it.id) ? "not-chosen" : undefined}>
              {it.label}
              {it.detail ? <span class="muted"> — {it.detail}</span> : null}
              {chosen && !chosen.includes(it.id) ? (
                <span class="muted"> (not approved)</span>
              ) : null}
            </li>
          ))}
        </ol>
      )}
    </fieldset>
  );
};

/** The view's parts (the agent's words, the exact arguments, the preview, the items), the context
 * and the changes since the last version. */
const Asked: FC<PanelProps & { ticks: boolean; checked: string[] }> = (p) => {
  const r = p.request;
  const view = reviewViewOf(r);
  return (
    <>
      <Context request={r} />
      {view.agentSummary && view.agentSummary.trim() !== view.title.trim() ? (
        <section class="card summary" aria-label="the agent says">
          <p class="muted said">The agent says (its own words, not checked by Airlock):</p>
          <Markdown cacheKey={`${r.id}:${r.version}:summary`} source={view.agentSummary} />
        </section>
      ) : null}
      <Args view={view} edited={r.decision?.editedArgs !== undefined} />
      {p.previous ? (
        <details class="card changes" open>
          <summary>
            Changes since the previous version (<a href={`/requests/${p.previous.id}`}>see it</a>
            {p.previous.decision?.comment ? (
              <>, asked for: “{p.previous.decision.comment}”</>
            ) : null}
            )
          </summary>
          <Changes
            before={asText(p.previous)}
            after={asText(r)}
            names={["previous version", "this version"]}
            what="Changes since the previous version"
          />
        </details>
      ) : null}
      {r.preview && r.decision?.editedArgs ? (
        // The preview shows what the agent proposed: after an edit, what runs is above (the
        // outcome's changes), so the proposal is kept one click away and says what it is.
        <details class="card preview superseded" aria-label="preview">
          <summary>The agent's proposal, before the edit (what runs is the edited version)</summary>
          <Preview request={r} />
        </details>
      ) : r.preview ? (
        <section class="card preview" aria-label="preview">
          <Preview request={r} />
        </section>
      ) : null}
      <Items request={r} ticks={p.ticks} checked={p.checked} />
      <OtherCritiques request={r} />
    </>
  );
};

/** Arguments up to this long are shown open; longer ones one click away (never cut below
 * MAX_SHOWN_CHARS). */
const ARGS_OPEN_CHARS = 4000;

/** Whether the page can show the view's exact arguments in full (MAX_SHOWN_CHARS): when it cannot,
 * it offers no approval (the route refuses one too). */
export function argsShownInFull(r: ApprovalRequest): boolean {
  return argsJson(r.args).length <= MAX_SHOWN_CHARS;
}

/** The exact arguments, as canonical pretty-printed JSON: what runs if approved as is. */
const Args: FC<{ view: ReviewView; edited?: boolean }> = ({ view, edited }) => {
  if (!Object.keys(view.args).length) return null;
  const text = argsJson(view.args);
  const shown = bounded(text, MAX_SHOWN_CHARS);
  return (
    <details class="card args" open={!edited && text.length <= ARGS_OPEN_CHARS}>
      <summary>
        {edited
          ? "The arguments the agent asked for (JSON): the approval edited them (above)"
          : "Exact arguments (JSON): what runs if approved"}
        {text.length > ARGS_OPEN_CHARS ? ` (${text.length.toLocaleString("en")} characters)` : ""}
      </summary>
      <pre class="json">{shown.text}</pre>
      <Truncated omitted={shown.omitted} />
    </details>
  );
};

// --- the outcome ----------------------------------------------------------------------------------

/** What an approval's edit changed, field by field: a value as before → after, a text as a line
 * diff, a file's content as the diff of what will be written. */
export const EditedChanges: FC<{ request: ApprovalRequest }> = ({ request: r }) => {
  const edited = r.decision?.editedArgs;
  if (!edited) return null;
  const list = fieldChanges(r.args, edited, r.preview);
  return (
    <div class="edited" id="edited-changes">
      <p>
        <strong>Approved with edited arguments</strong>
        {list.length
          ? `: ${list.length} ${list.length === 1 ? "field" : "fields"} changed. What runs is the edited version.`
          : " (the same as asked)."}
      </p>
      <ul class="field-changes">
        {list.map((c) => {
          const multiline =
            typeof c.before === "string" &&
            typeof c.after === "string" &&
            (c.before.includes("\n") || c.after.includes("\n"));
          if (!multiline) {
            return (
              <li data-field={c.name}>
                <code>{c.name}</code>: <del>{inline(c.before)}</del> → <ins>{inline(c.after)}</ins>
              </li>
            );
          }
          return (
            <li data-field={c.name}>
              {c.file ? (
                <p>
                  <code>{c.name}</code>: what will be written to <code>{c.file}</code>
                  <span class="muted">
                    {c.against === "file"
                      ? " (diff from the file as it is now)"
                      : " (diff from the content the agent proposed)"}
                  </span>
                </p>
              ) : (
                <p>
                  <code>{c.name}</code> changed:
                </p>
              )}
              {c.lines === undefined ? (
                <p class="muted">Too large or too different to compare here.</p>
              ) : (
                <DiffView
                  lines={c.lines}
                  label={c.file ? `what will be written to ${c.file}` : c.name}
                />
              )}
            </li>
          );
        })}
      </ul>
    </div>
  );
};

export const Outcome: FC<{
  request: ApprovalRequest;
  notice?: string | undefined;
  successor?: ApprovalRequest | undefined;
}> = ({ request: r, notice, successor }) => {
  const d = r.decision;
  const chosen = d?.selected ? r.items.filter((i) => d.selected?.includes(i.id)) : [];
  return (
    <div class="card outcome" role="status">
      {notice ? <p class="error">{notice}</p> : null}
      <p>
        <strong class={`status-${r.status}`}>{statusWords(r.status)}</strong>
        {d ? (
          <>
            {" "}
            by <strong>{d.reviewer}</strong> via {d.channel}
            {methodWords(d.method) ? ` (${methodWords(d.method)})` : ""}, <Time at={d.decidedAt} />
          </>
        ) : null}
      </p>
      {d?.comment ? <p>“{d.comment}”</p> : null}
      {d?.outcome === "responded" ? (
        <div id="response">
          <p>The answer the agent gets:</p>
          {typeof d.response === "string" ? (
            <pre class="json response-text">{d.response}</pre>
          ) : (
            <pre class="json">{JSON.stringify(d.response, null, 2)}</pre>
          )}
        </div>
      ) : null}
      {chosen.length && r.items.length ? (
        <p>
          Approved items: {chosen.map((i) => i.label).join(", ")} ({chosen.length} of{" "}
          {r.items.length})
        </p>
      ) : null}
      <EditedChanges request={r} />
      {r.status === "revise" ? (
        successor ? (
          <p>
            Revised as <a href={`/requests/${successor.id}`}>{successor.title}</a> (
            {statusWords(successor.status)}).
          </p>
        ) : (
          <p class="muted">No revised version has arrived yet.</p>
        )
      ) : null}
    </div>
  );
};

/** What became of an approved action (core/execution.ts), and, when nobody knows whether it ran or
 * it failed, the person's three ways to settle it. The engine decides who may (an approver, an
 * admin; never the requester or an agent's credential). */
export const ExecutionState: FC<{ request: ApprovalRequest; csrf: string }> = ({
  request: r,
  csrf,
}) => {
  const x = r.execution;
  if (r.status !== "approved") return null;
  if (!x) {
    return (
      <p class="card muted" id="execution" data-execution="none">
        {r.executedAt !== undefined ? (
          <>
            Claimed for execution by {r.executedBy ?? "someone"} <Time at={r.executedAt} />{" "}
            (recorded before outcomes were kept).
          </>
        ) : (
          "Not run yet: nothing has claimed this approval."
        )}
      </p>
    );
  }
  const who = (
    <>
      {x.claimedBy}, <Time at={x.claimedAt} /> (attempt {String(x.attempt)})
    </>
  );
  const lines: Record<typeof x.state, unknown> = {
    claimed: <>Running: claimed by {who}; no outcome reported yet.</>,
    executed: x.resolvedBy ? (
      <>
        Marked done by {x.resolvedBy}
        {x.comment ? `: “${x.comment}”` : ""} (claimed by {who}).
      </>
    ) : (
      <>Ran: claimed and reported by {who}.</>
    ),
    failed: (
      <>
        Failed when run by {who}: {x.error ?? "no message"}.
      </>
    ),
    unknown: (
      <>
        <strong>Approved, not known to have run.</strong> Claimed by {who}, and no outcome was
        reported before its lease ended (its process stopped). Find out whether it happened, then
        settle it.
      </>
    ),
    released: (
      <>
        Released for another attempt by {x.resolvedBy ?? "someone"}
        {x.comment ? `: “${x.comment}”` : ""}.
      </>
    ),
    abandoned: (
      <>
        Abandoned by {x.resolvedBy ?? "someone"}
        {x.comment ? `: “${x.comment}”` : ""}.
      </>
    ),
  };
  const settle = x.state === "unknown" || x.state === "failed";
  return (
    <div class={`card execution execution-${x.state}`} id="execution" data-execution={x.state}>
      <p>{lines[x.state]}</p>
      {settle ? (
        <form method="post" action={`/requests/${r.id}/execution`}>
          <Hidden name="_csrf" value={csrf} />
          <label>
            Why (kept in the audit log)
            <input type="text" name="comment" maxlength={2000} />
          </label>
          <div class="buttons">
            <button type="submit" name="resolution" value="retry">
              Run it again
            </button>
            <button type="submit" name="resolution" value="done">
              It happened: mark done
            </button>
            <button type="submit" name="resolution" value="abandon">
              Abandon it
            </button>
          </div>
        </form>
      ) : null}
    </div>
  );
};

// --- the decision panel ---------------------------------------------------------------------------

/** Answering the request instead of approving or rejecting it (`respond`): the answer is what the
 * waiting agent gets, checked against the request's `responseSchema`. Fields when that schema is an
 * object with properties; else one text box (sent as text, or as JSON when the schema asks for
 * something other than text). */
const RespondForm: FC<PanelProps & { action: string; viewDigest: string }> = (p) => {
  const { request: r, error } = p;
  const mine = error?.form === "respond" ? error : undefined;
  const schema = r.responseSchema;
  const wantsJson = schema !== undefined && schema.type !== undefined && schema.type !== "string";
  return (
    <section class="card respond" id="respond" aria-label="answer the agent">
      <h2>Answer the agent</h2>
      <p class="muted">
        Instead of approving or rejecting, send the agent an answer (e.g. to its questions): it gets
        your words, and nothing runs.
      </p>
      <form method="post" action={p.action} id="respond-form">
        <Hidden name="_csrf" value={p.csrf} />
        <Hidden name="viewDigest" value={p.viewDigest} />
        <Hidden name="action" value="respond" />
        {p.responseFields ? (
          <>
            <Hidden name="response_mode" value="fields" />
            <EditFields
              fields={p.responseFields}
              args={{}}
              posted={mine?.posted}
              errorField={mine?.field}
              errorMessage={mine?.message}
            />
            {mine && !p.responseFields.some((f) => f.name === mine.field) ? (
              <p class="error" role="alert">
                {mine.message}
              </p>
            ) : null}
          </>
        ) : (
          <>
            <Hidden name="response_mode" value={wantsJson ? "json" : "text"} />
            <label for="response">Your answer{wantsJson ? " (JSON)" : ""}</label>
            <textarea
              id="response"
              name="response"
              class={wantsJson ? "json" : undefined}
              required
              aria-invalid={mine ? "true" : undefined}
            >
              {mine?.argsText ?? ""}
            </textarea>
            {mine ? (
              <p class="error" role="alert">
                {mine.message}
              </p>
            ) : null}
          </>
        )}
        <div class="actions">
          <button class="primary" id="btn-respond" type="submit">
            Send the answer
          </button>
        </div>
      </form>
    </section>
  );
};

/** The arguments edited as one JSON object: for a request without fields to show, or by choice. */
const JsonEditForm: FC<{
  action: string;
  csrf: string;
  viewDigest: string;
  id: string;
  text: string;
  error?: string | undefined;
}> = ({ action, csrf, viewDigest, id, text, error }) => (
  <form method="post" action={action} id={id}>
    <Hidden name="_csrf" value={csrf} />
    <Hidden name="viewDigest" value={viewDigest} />
    <Hidden name="action" value="edit" />
    <label for="edit-args">Arguments (JSON)</label>
    <textarea
      id="edit-args"
      class="json"
      name="args"
      data-error-for="edit-json-error"
      spellcheck={false}
    >
      {text}
    </textarea>
    <p id="edit-json-error" class="error" role="alert" hidden={error === undefined}>
      {error ?? ""}
    </p>
    <div class="actions">
      <button class="approve" id={id === "edit-form" ? "btn-edit" : "btn-edit-json"} type="submit">
        Approve with these arguments
      </button>
    </div>
  </form>
);

const Hidden: FC<{ name: string; value: string }> = ({ name, value }) => (
  <input type="hidden" name={name} value={value} />
);

export const DecisionPanel: FC<PanelProps> = (props) => {
  const { request: r, csrf, canDecide, whyNot, error, notice, confirm } = props;
  const head = (
    <>
      <Strip request={r} />
    </>
  );
  if (r.status !== "pending") {
    return (
      <section id="decision-panel" data-status={r.status} aria-label="decision">
        {head}
        <Outcome request={r} notice={notice} successor={props.successor} />
        <ExecutionState request={r} csrf={csrf} />
        <LiveReport requestId={r.id} doc={props.progress} />
        <Asked {...props} ticks={false} checked={[]} />
      </section>
    );
  }
  if (!canDecide) {
    return (
      <section id="decision-panel" data-status="pending" aria-label="decision">
        {head}
        <p class="card muted">{whyNot ?? "You may not decide this request."}</p>
        <LiveReport requestId={r.id} doc={props.progress} />
        <Asked {...props} ticks={false} checked={[]} />
      </section>
    );
  }
  // Approving needs the whole of what runs on the page: a request whose arguments it cannot show in
  // full is not offered for approval here (rejecting and revising stay).
  const inFull = argsShownInFull(r);
  const allows = (k: string) =>
    (inFull || (k !== "approve" && k !== "select" && k !== "edit")) &&
    r.allowed.includes(k as ApprovalRequest["allowed"][number]);
  const action = `/requests/${r.id}/decide`;
  // Every decision form carries the digest of the view this page shows.
  const viewDigest = viewDigestOf(r);
  const errorFor = (form: FormError["form"]) =>
    error?.form === form ? (
      <p class="error" role="alert">
        {error.message}
      </p>
    ) : null;
  const approvals = r.decisions.filter((d) => d.outcome === "approved");
  const ticks = selectable(r);
  const checked =
    confirm?.selected ??
    (error?.form === "decide" || error?.form === "revise" ? (error.selected ?? []) : []);
  const comment =
    confirm?.comment ??
    (error?.form === "decide" || error?.form === "revise" ? (error.comment ?? "") : "");
  // What the agent asked the buttons to say, after the verb, unless it inverts it (core/labels.ts).
  const { labels } = presentationOf(r);
  const canRevise = allows("revise");
  const commentRequired = revisionCommentRequired(r);
  const argsText = allows("edit") ? JSON.stringify(r.args, null, 2) : "";
  return (
    <section id="decision-panel" data-status="pending" aria-label="decision">
      {head}
      {notice ? <p class="error">{notice}</p> : null}
      {approvals.length ? (
        <p class="muted">
          {approvals.length} of {r.quorum} approvals so far (
          {approvals.map((d) => d.reviewer).join(", ")}).
        </p>
      ) : null}
      <form method="post" action={action} id="decide-form" class="decide">
        <Hidden name="_csrf" value={csrf} />
        <Hidden name="viewDigest" value={viewDigest} />
        <Asked {...props} ticks={ticks} checked={checked} />
        {inFull ? null : (
          <p class="card error" id="too-large">
            The exact arguments are too large to show here in full, so this request cannot be
            approved in the inbox: read them whole with <code>GET /v1/requests/{r.id}/view</code>.
            You can still reject it or ask for a revision.
          </p>
        )}
        <label for="comment">
          Comment{" "}
          <span class="muted">
            {canRevise
              ? commentRequired
                ? "— to request a revision, say what should change (comment required); optional to approve or reject"
                : "(optional; with a revision, say what should change)"
              : "(optional)"}
          </span>
        </label>
        <textarea
          id="comment"
          name="comment"
          data-revise-required={commentRequired ? "yes" : undefined}
        >
          {comment}
        </textarea>
        <p class="muted" id="revise-hint" hidden>
          Say what should change, then press Enter (Shift+Enter for a new line) or Request revision.
        </p>
        {errorFor("decide")}
        {errorFor("revise")}
        {confirm ? (
          <div class="confirm card decide-bar" role="alertdialog" aria-label="confirm">
            <p>
              <strong>{confirm.message}</strong>
            </p>
            <Hidden name="confirmed" value="yes" />
            {confirm.fields !== undefined ? (
              <>
                <Hidden name="edit_mode" value="fields" />
                {Object.entries(confirm.fields).map(([name, value]) =>
                  value === undefined ? null : <Hidden name={fieldName(name)} value={value} />,
                )}
              </>
            ) : confirm.args !== undefined ? (
              <Hidden name="args" value={confirm.args} />
            ) : null}
            <div class="actions">
              {confirm.choices.map((c, i) => (
                <button
                  class="approve"
                  id={i === 0 ? "btn-confirm" : `btn-confirm-${i}`}
                  type="submit"
                  name="action"
                  value={c.action}
                >
                  {c.label}
                </button>
              ))}
              <a class="button" href={`/requests/${r.id}`} id="btn-back">
                Go back
              </a>
            </div>
          </div>
        ) : (
          <div class="actions decide-bar">
            {allows("approve") ? (
              <button class="approve" id="btn-approve" type="submit" name="action" value="approve">
                {buttonLabel("approve", labels.approve, ticks ? "Approve all" : "Approve")}
              </button>
            ) : null}
            {ticks ? (
              <button
                class="approve secondary"
                id="btn-approve-selected"
                type="submit"
                name="action"
                value="approve_selected"
              >
                Approve selected
              </button>
            ) : null}
            {canRevise ? (
              <button class="warn" id="btn-revise" type="submit" name="action" value="revise">
                Request revision
              </button>
            ) : null}
            {allows("respond") ? (
              <a class="button" href="#respond" id="btn-respond-open">
                Answer…
              </a>
            ) : null}
            <button class="reject" id="btn-reject" type="submit" name="action" value="reject">
              {buttonLabel("reject", labels.reject)}
            </button>
            <span class="muted keys">
              Keys: <kbd>a</kbd> approve
              {canRevise ? (
                <>
                  , <kbd>r</kbd> revise
                </>
              ) : null}
              , <kbd>d</kbd> reject
              {/* The rule is core/danger.ts's: labels, and what will run. */}
              {needsConfirmation(r).reasons.length > 0 ? " (approving asks to confirm first)" : ""}.
            </span>
          </div>
        )}
        {confirm ? null : (
          // Shown by the `d` key (assets.ts): rejecting from the keyboard asks first.
          <div
            class="confirm card decide-bar"
            id="reject-confirm"
            role="alertdialog"
            aria-label="confirm rejection"
            hidden
          >
            <p>
              <strong>Reject “{r.title}”?</strong> The agent is told it was rejected
              {canRevise ? " (to ask for changes instead, request a revision)" : ""}. Your comment
              above goes with it.
            </p>
            <div class="actions">
              <button
                class="reject"
                id="btn-reject-confirm"
                type="submit"
                name="action"
                value="reject"
              >
                Yes, reject
              </button>
              <button type="button" id="btn-reject-back">
                Go back
              </button>
            </div>
          </div>
        )}
      </form>
      {allows("respond") ? (
        <RespondForm {...props} action={action} viewDigest={viewDigest} />
      ) : null}
      <LiveReport requestId={r.id} doc={props.progress} />
      {allows("edit") && argsText.length > MAX_SHOWN_CHARS ? (
        <p class="card muted">
          The arguments are too large to edit here ({argsText.length.toLocaleString("en")}{" "}
          characters); approve or reject them as they are.
        </p>
      ) : allows("edit") ? (
        <details class="card edit" id="edit" open={error?.form === "edit"}>
          <summary>Edit the arguments, then approve</summary>
          <p class="muted" id="edit-schema">
            {props.schemaNote ?? "Checked when you approve."}
          </p>
          {props.editFields ? (
            <>
              <form method="post" action={action} id="edit-form" class="edit-form">
                <Hidden name="_csrf" value={csrf} />
                <Hidden name="viewDigest" value={viewDigest} />
                <Hidden name="action" value="edit" />
                <Hidden name="edit_mode" value="fields" />
                <EditFields
                  fields={props.editFields}
                  args={r.args}
                  posted={error?.form === "edit" ? error.posted : undefined}
                  errorField={error?.form === "edit" ? error.field : undefined}
                  errorMessage={error?.form === "edit" ? error.message : undefined}
                />
                {error?.form === "edit" &&
                error.posted !== undefined &&
                !props.editFields.some((f) => f.name === error.field) ? (
                  <p id="edit-error" class="error" role="alert">
                    {error.message}
                  </p>
                ) : null}
                <div class="actions">
                  <button class="approve" id="btn-edit" type="submit">
                    Approve with these arguments
                  </button>
                </div>
              </form>
              <details
                class="edit-json"
                open={error?.form === "edit" && error.posted === undefined}
              >
                <summary>Edit as JSON instead</summary>
                <JsonEditForm
                  action={action}
                  csrf={csrf}
                  viewDigest={viewDigest}
                  id="edit-json-form"
                  text={
                    error?.form === "edit" && error.posted === undefined
                      ? (error.argsText ?? "")
                      : argsText
                  }
                  error={
                    error?.form === "edit" && error.posted === undefined ? error.message : undefined
                  }
                />
              </details>
            </>
          ) : (
            <JsonEditForm
              action={action}
              csrf={csrf}
              viewDigest={viewDigest}
              id="edit-form"
              text={error?.form === "edit" ? (error.argsText ?? "") : argsText}
              error={error?.form === "edit" ? error.message : undefined}
            />
          )}
        </details>
      ) : null}
      <details class="card" open={error?.form === "cancel"}>
        <summary>Cancel this request</summary>
        <form method="post" action={action} id="cancel-form">
          <Hidden name="_csrf" value={csrf} />
          <Hidden name="action" value="cancel" />
          <label for="cancel-reason">Why? (recorded in the audit trail)</label>
          <textarea id="cancel-reason" name="reason" required>
            {error?.form === "cancel" ? (error.comment ?? "") : ""}
          </textarea>
          {errorFor("cancel")}
          <div class="actions">
            <button class="reject" id="btn-cancel" type="submit">
              Cancel the request
            </button>
          </div>
        </form>
      </details>
    </section>
  );
};

// --- the side panel -------------------------------------------------------------------------------

/** Status, deadline and who is involved; refreshed live with the decision panel. */
export const Facts: FC<{ request: ApprovalRequest }> = ({ request: r }) => (
  <section class="card" id="facts" data-status={r.status} data-version={String(r.version)}>
    <dl class="facts">
      <dt>Status</dt>
      <dd class={`status-${r.status}`}>{statusWords(r.status)}</dd>
      <dt>Deadline</dt>
      <dd>
        {r.status === "pending" ? (
          <Countdown deadline={r.deadline} />
        ) : r.decision ? (
          <>
            decided <Time at={r.decision.decidedAt} />
          </>
        ) : (
          "—"
        )}
      </dd>
      <dt>Action</dt>
      <dd>{r.action}</dd>
      <dt>Risk</dt>
      <dd>
        <Badge kind="risk" text={r.risk} />
      </dd>
      <dt>Confidence</dt>
      <dd>{r.confidence !== undefined ? String(r.confidence) : "—"}</dd>
      <dt>Level</dt>
      <dd>{r.level}</dd>
      <dt>Requester</dt>
      <dd>{r.requester}</dd>
      <dt>Approvers</dt>
      <dd>{r.approvers.length ? r.approvers.join(", ") : "anyone but the requester"}</dd>
      {r.quorum > 1 ? (
        <>
          <dt>Quorum</dt>
          <dd>{String(r.quorum)}</dd>
        </>
      ) : null}
      <dt>Created</dt>
      <dd>
        <Time at={r.createdAt} />
      </dd>
      <dt>Id</dt>
      <dd>
        <code>{r.id}</code>
      </dd>
    </dl>
  </section>
);

function describe(e: AuditEvent): string {
  const d = e.data;
  switch (e.type) {
    case "created":
      return `created by ${e.actor}`;
    case "decided":
    case "timed_out":
    case "cancelled":
      return `${statusWords(String(d.outcome))}${methodWords(String(d.method)) ? ` (${methodWords(String(d.method))})` : ""} by ${e.actor}${d.comment ? `: “${String(d.comment)}”` : d.reason ? `: “${String(d.reason)}”` : ""}`;
    case "decision_recorded":
      return `approval ${String(d.approvals)} of ${String(d.quorum)} by ${e.actor}`;
    case "escalated":
      return `escalated to ${Array.isArray(d.to) ? d.to.join(", ") : ""}`;
    case "notified":
    case "auto_executed": {
      // Agents' progress (e.g. a research run's tool calls and report updates) and their automatic
      // executions: say what happened in a few words.
      const what = [d.event, d.tool, d.section, d.status, d.message, d.reason]
        .filter((v) => typeof v === "string" && v !== "")
        .join(" · ");
      return `${e.type === "notified" ? "progress" : "auto-executed"} from ${e.actor}${what ? `: ${what}` : ""}`;
    }
    default:
      return `${e.type.replace("_", " ")} by ${e.actor}`;
  }
}

const TrailLine: FC<{ event: AuditEvent }> = ({ event: e }) => (
  <li>
    <span class="muted">
      <Time at={e.at} />
    </span>{" "}
    {describe(e)}
  </li>
);

/** The request's audit trail; the page refreshes it live as events arrive. An agent's progress
 * events (its tool calls and report updates, shown as its report above) are folded, each run of
 * them in one line that opens to the raw events. */
export const Trail: FC<{ events: AuditEvent[] }> = ({ events }) => {
  const runs: (AuditEvent | AuditEvent[])[] = [];
  for (const e of events) {
    const last = runs[runs.length - 1];
    if (!isProgress(e)) runs.push(e);
    else if (Array.isArray(last)) last.push(e);
    else runs.push([e]);
  }
  return (
    <ol class="trail" id="trail">
      {runs.map((run) =>
        Array.isArray(run) ? (
          <li class="progress-run">
            <details>
              <summary>
                <span class="muted">
                  <Time at={run[0]?.at ?? 0} />
                </span>{" "}
                {String(run.length)} progress {run.length === 1 ? "event" : "events"} from{" "}
                {[...new Set(run.map((e) => e.actor))].join(", ")} (tool calls, report updates)
              </summary>
              <ol class="trail">
                {run.map((e) => (
                  <TrailLine event={e} />
                ))}
              </ol>
            </details>
          </li>
        ) : (
          <TrailLine event={run} />
        ),
      )}
    </ol>
  );
};

/** The two live parts of the page, as the panel fragment sends them. */
export const LiveParts: FC<PanelProps> = (props) => (
  <div>
    <DecisionPanel {...props} />
    <Facts request={props.request} />
  </div>
);

export const RequestPage: FC<PanelProps & { trail: AuditEvent[]; revisions: ApprovalRequest[] }> = (
  props,
) => {
  const r = props.request;
  return (
    <>
      <p class="back">
        <a href="/">← Inbox</a>
      </p>
      <h1 class="title">{r.title}</h1>
      <div class="grid">
        <div class="main">
          <DecisionPanel {...props} />
        </div>
        <aside>
          <Facts request={r} />
          {props.revisions.length ? (
            <section class="card" aria-label="revision history">
              <h2>Earlier versions</h2>
              <ol class="trail">
                {props.revisions.map((v) => (
                  <li>
                    <a href={`/requests/${v.id}`}>{v.title}</a> —{" "}
                    <span class={`status-${v.status}`}>{statusWords(v.status)}</span>
                    {v.decision?.comment ? <>: “{v.decision.comment}”</> : null}
                  </li>
                ))}
              </ol>
            </section>
          ) : null}
          <section class="card" aria-label="audit trail">
            <h2>Audit trail</h2>
            <Trail events={props.trail} />
          </section>
        </aside>
      </div>
    </>
  );
};
