// One request: what is asked (summary, preview or diff, args, items), the decision forms, and its
// revision history and audit trail.
import { raw } from "hono/html";
import type { FC } from "hono/jsx";
import type { ApprovalRequest, AuditEvent } from "../../../core/schemas.js";
import { looksLikeDiff, parseDiff } from "../diff.js";
import { renderMarkdown } from "../markdown.js";
import { Badge, Countdown } from "./queue.js";

export interface FormError {
  form: "decide" | "revise" | "edit";
  message: string;
  /** What the reviewer typed, shown again so nothing is lost. */
  argsText?: string;
  comment?: string;
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
}

const Markdown: FC<{ source: string }> = ({ source }) => (
  <div class="markdown">{raw(renderMarkdown(source))}</div>
);

export const Preview: FC<{ text: string }> = ({ text }) =>
  looksLikeDiff(text) ? (
    <pre class="diff" title="unified diff">
      {parseDiff(text).map((l) => (
        <span class={l.kind}>{l.text || " "}</span>
      ))}
    </pre>
  ) : (
    <Markdown source={text} />
  );

function label(r: ApprovalRequest, key: "approveLabel" | "rejectLabel", fallback: string): string {
  const own = r.metadata[key];
  if (typeof own === "string" && own.trim()) return own;
  const hitl = r.metadata.hitl;
  if (hitl && typeof hitl === "object") {
    const v = (hitl as Record<string, unknown>)[key];
    if (typeof v === "string" && v.trim()) return v;
  }
  return fallback;
}

/** Whether a revision request may come without a comment (`metadata.revisionCommentOptional`). */
function commentOptional(r: ApprovalRequest): boolean {
  return r.metadata.revisionCommentOptional === true;
}

export const Outcome: FC<{ request: ApprovalRequest; notice?: string | undefined }> = ({
  request: r,
  notice,
}) => {
  const d = r.decision;
  const chosen = d?.selected ? r.items.filter((i) => d.selected?.includes(i.id)) : [];
  return (
    <div class="card outcome" role="status">
      {notice ? <p class="error">{notice}</p> : null}
      <p>
        <strong class={`status-${r.status}`}>{r.status.replace("_", " ")}</strong>
        {d ? (
          <>
            {" "}
            by <strong>{d.reviewer}</strong> via {d.channel} ({d.method}) at{" "}
            {new Date(d.decidedAt).toISOString()}
          </>
        ) : null}
      </p>
      {d?.comment ? <p>“{d.comment}”</p> : null}
      {chosen.length && r.items.length ? (
        <p>
          Approved items: {chosen.map((i) => i.label).join(", ")} ({chosen.length} of{" "}
          {r.items.length})
        </p>
      ) : null}
      {d?.editedArgs ? <pre class="json">{JSON.stringify(d.editedArgs, null, 2)}</pre> : null}
    </div>
  );
};

export const DecisionPanel: FC<PanelProps> = ({
  request: r,
  csrf,
  canDecide,
  whyNot,
  error,
  notice,
}) => {
  if (r.status !== "pending") {
    return (
      <section id="decision-panel" data-status={r.status} aria-label="decision">
        <Outcome request={r} notice={notice} />
      </section>
    );
  }
  if (!canDecide) {
    return (
      <section id="decision-panel" data-status="pending" aria-label="decision">
        <p class="card muted">{whyNot ?? "You may not decide this request."}</p>
      </section>
    );
  }
  const allows = (k: string) => r.allowed.includes(k as ApprovalRequest["allowed"][number]);
  const action = `/requests/${r.id}/decide`;
  const errorFor = (form: FormError["form"]) =>
    error?.form === form ? (
      <p class="error" role="alert">
        {error.message}
      </p>
    ) : null;
  const approvals = r.decisions.filter((d) => d.outcome === "approved");
  return (
    <section id="decision-panel" data-status="pending" aria-label="decision">
      {approvals.length ? (
        <p class="muted">
          {approvals.length} of {r.quorum} approvals so far (
          {approvals.map((d) => d.reviewer).join(", ")}).
        </p>
      ) : null}
      <form method="post" action={action} class="card" id="decide-form">
        <input type="hidden" name="_csrf" value={csrf} />
        {r.items.length ? (
          <fieldset class="items">
            <legend>Items ({r.items.length})</legend>
            {r.items.map((it, i) => (
              <label>
                <input type="checkbox" name="items" value={it.id} /> {i + 1}. {it.label}
                {it.detail ? <span class="muted"> — {it.detail}</span> : null}
              </label>
            ))}
          </fieldset>
        ) : null}
        <label for="comment">Comment (optional)</label>
        <textarea id="comment" name="comment">
          {error?.form === "decide" ? (error.comment ?? "") : ""}
        </textarea>
        {errorFor("decide")}
        <div class="actions">
          {allows("approve") ? (
            <button class="primary" id="btn-approve" type="submit" name="action" value="approve">
              {label(r, "approveLabel", r.items.length ? "Approve all" : "Approve")}
            </button>
          ) : null}
          {allows("select") && r.items.length ? (
            <button id="btn-approve-selected" type="submit" name="action" value="approve_selected">
              Approve selected
            </button>
          ) : null}
          {allows("reject") ? (
            <button class="danger" id="btn-reject" type="submit" name="action" value="reject">
              {label(r, "rejectLabel", "Reject")}
            </button>
          ) : null}
        </div>
        <p class="muted">
          Keys: <kbd>a</kbd> approve, <kbd>r</kbd> revise, <kbd>d</kbd> decline.
        </p>
      </form>
      {allows("revise") ? (
        <form method="post" action={action} class="card" id="revise-form">
          <input type="hidden" name="_csrf" value={csrf} />
          <input type="hidden" name="action" value="revise" />
          <label for="revise-comment">What changes do you want?</label>
          <textarea id="revise-comment" name="comment" required={!commentOptional(r)}>
            {error?.form === "revise" ? (error.comment ?? "") : ""}
          </textarea>
          {errorFor("revise")}
          <div class="actions">
            <button class="warn" id="btn-revise" type="submit">
              Request revision
            </button>
          </div>
        </form>
      ) : null}
      {allows("edit") ? (
        <details class="card" open={error?.form === "edit"}>
          <summary>Edit the arguments, then approve</summary>
          <form method="post" action={action} id="edit-form">
            <input type="hidden" name="_csrf" value={csrf} />
            <input type="hidden" name="action" value="edit" />
            <label for="edit-args">Arguments (JSON)</label>
            <textarea
              id="edit-args"
              class="json"
              name="args"
              data-error-for="edit-error"
              spellcheck={false}
            >
              {error?.form === "edit" ? (error.argsText ?? "") : JSON.stringify(r.args, null, 2)}
            </textarea>
            <p id="edit-error" class="error" role="alert" hidden={error?.form !== "edit"}>
              {error?.form === "edit" ? error.message : ""}
            </p>
            <div class="actions">
              <button class="primary" id="btn-edit" type="submit">
                Approve with these arguments
              </button>
            </div>
          </form>
        </details>
      ) : null}
    </section>
  );
};

function describe(e: AuditEvent): string {
  const d = e.data;
  switch (e.type) {
    case "created":
      return `created by ${e.actor}`;
    case "decided":
    case "timed_out":
    case "cancelled":
      return `${String(d.outcome)} (${String(d.method)}) by ${e.actor}${d.comment ? `: “${String(d.comment)}”` : ""}`;
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

/** The request's audit trail; the page refreshes it live as events arrive. */
export const Trail: FC<{ events: AuditEvent[] }> = ({ events }) => (
  <ol class="trail" id="trail">
    {events.map((e) => (
      <li>
        <span class="muted">{new Date(e.at).toISOString().replace("T", " ").slice(0, 19)}</span>{" "}
        {describe(e)}
      </li>
    ))}
  </ol>
);

export const RequestPage: FC<PanelProps & { trail: AuditEvent[]; revisions: ApprovalRequest[] }> = (
  props,
) => {
  const r = props.request;
  return (
    <>
      <p>
        <a href="/">← Inbox</a>
      </p>
      <h1>{r.title}</h1>
      <div class="grid">
        <div>
          {r.summary ? (
            <section class="card" aria-label="summary">
              <Markdown source={r.summary} />
            </section>
          ) : null}
          {r.preview ? (
            <section class="card" aria-label="preview">
              <h2>Preview</h2>
              <Preview text={r.preview} />
            </section>
          ) : null}
          {Object.keys(r.args).length ? (
            <section class="card" aria-label="arguments">
              <h2>Arguments</h2>
              <pre class="json">{JSON.stringify(r.args, null, 2)}</pre>
            </section>
          ) : null}
          <DecisionPanel {...props} />
        </div>
        <aside>
          <section class="card">
            <dl class="facts">
              <dt>Status</dt>
              <dd class={`status-${r.status}`}>{r.status}</dd>
              <dt>Deadline</dt>
              <dd>{r.status === "pending" ? <Countdown deadline={r.deadline} /> : "—"}</dd>
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
              <dt>Id</dt>
              <dd>
                <code>{r.id}</code>
              </dd>
            </dl>
          </section>
          {props.revisions.length ? (
            <section class="card" aria-label="revision history">
              <h2>Revision history</h2>
              <ol class="trail">
                {props.revisions.map((v) => (
                  <li>
                    <a href={`/requests/${v.id}`}>{v.title}</a> —{" "}
                    <span class={`status-${v.status}`}>{v.status}</span>
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
