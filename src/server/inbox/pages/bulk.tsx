// The answer to a bulk decision: which requests were decided, and, apart, exactly those someone
// else decided first (with who and how), then any the reviewer could not decide and why, then those
// left pending because the reviewer was not shown them (new since the page was rendered).
import type { FC } from "hono/jsx";
import type { FittedView } from "../../../channels/view-fit.js";
import { viewTextLines } from "../../../channels/view-text.js";
import type { Decision } from "../../../core/schemas.js";

/** Characters of one request's view (view-fit.ts) a bulk confirmation shows: a request whose view is
 * larger is not approved in bulk (it is listed as left pending: open it to decide it). */
export const BULK_VIEW_BUDGET = 4000;

/** One request as a bulk approval's confirmation shows it: its review view as text, and the digest
 * of that view, which the confirmation posts back. */
export interface BulkView {
  id: string;
  title: string;
  digest: string;
  text: string;
}

/** A view on a bulk confirmation: the facts and parts, the title being the link above them. */
export function bulkViewText(fitted: FittedView): string {
  return viewTextLines(fitted, { withoutTitle: true }).join("\n");
}

export interface BulkLine {
  id: string;
  /** The request's title, when the reviewer may see it. */
  title?: string;
  /** The request's status: after this decision (pending while a quorum is not reached), or as
   * whoever settled it first left it. */
  status?: string;
  /** Not decided: why, in words. */
  detail?: string;
  /** Decided by someone else first: their decision. */
  winner?: Decision;
}

export interface BulkResultProps {
  verb: "approve" | "reject";
  decided: BulkLine[];
  /** Decided by someone else before this reviewer's decision reached them. */
  first: BulkLine[];
  failed: BulkLine[];
  /** Left pending without a decision: not among what the reviewer was shown, or set aside. */
  left: BulkLine[];
  /** Set when "all matching the filter" found other requests than the page showed, or more than
   * one form decides. */
  note?: string;
}

const Title: FC<{ line: BulkLine }> = ({ line }) => (
  <a href={`/requests/${line.id}`}>{line.title ?? line.id}</a>
);

/** The requests left pending, and why. */
const LeftPending: FC<{ left: BulkLine[] }> = ({ left }) =>
  left.length > 0 ? (
    <section class="card" id="bulk-left" aria-labelledby="h-left">
      <h2 id="h-left">Left pending ({String(left.length)})</h2>
      <p class="muted">Not decided by this form: open them, or reload the inbox to decide them.</p>
      <ul>
        {left.map((l) => (
          <li key={l.id} data-request-id={l.id}>
            <Title line={l} />: {l.detail}
          </li>
        ))}
      </ul>
    </section>
  ) : null;

export const BulkResultPage: FC<BulkResultProps> = ({
  verb,
  decided,
  first,
  failed,
  left,
  note,
}) => (
  <>
    <h1>
      {verb === "approve" ? "Approved" : "Rejected"} {String(decided.length)} of{" "}
      {String(decided.length + first.length + failed.length)}
    </h1>
    <p>
      <a href="/">Back to the inbox</a>
    </p>
    {note ? <p class="error">{note}</p> : null}
    <section class="card" id="bulk-decided" aria-labelledby="h-decided">
      <h2 id="h-decided">Decided by you ({String(decided.length)})</h2>
      {decided.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ul>
          {decided.map((l) => (
            <li key={l.id} data-request-id={l.id}>
              <Title line={l} />{" "}
              <span class={`status-${l.status ?? ""}`}>
                {l.status === "pending" ? "approval recorded, still pending" : l.status}
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
    <section class="card" id="bulk-first" aria-labelledby="h-first">
      <h2 id="h-first">Decided by someone else first ({String(first.length)})</h2>
      {first.length === 0 ? (
        <p class="muted">None: nobody got there before you.</p>
      ) : (
        <>
          <p class="muted">Your decision was not recorded for these.</p>
          <ul>
            {first.map((l) => (
              <li key={l.id} data-request-id={l.id}>
                <Title line={l} />:{" "}
                {l.winner ? (
                  <>
                    <span class={`status-${l.winner.outcome}`}>{l.winner.outcome}</span> by{" "}
                    <strong class="who">{l.winner.reviewer}</strong>
                    {l.winner.comment ? <span class="muted"> — “{l.winner.comment}”</span> : null}
                  </>
                ) : (
                  <span class={`status-${l.status ?? ""}`}>{l.status?.replace("_", " ")}</span>
                )}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
    {failed.length > 0 ? (
      <section class="card" id="bulk-failed" aria-labelledby="h-failed">
        <h2 id="h-failed">Not decided ({String(failed.length)})</h2>
        <ul>
          {failed.map((l) => (
            <li key={l.id} data-request-id={l.id}>
              <Title line={l} />: {l.detail}
            </li>
          ))}
        </ul>
      </section>
    ) : null}
    <LeftPending left={left} />
  </>
);

export interface BulkConfirmProps {
  csrf: string;
  /** The form's own fields (the ticked ids, or "all matching" with what the page showed), posted
   * again with the confirmation, so the same rule picks the same requests. */
  carry: [string, string][];
  /** How many requests the approval covers, the risky ones included. */
  count: number;
  /** The requests that ask first, each with why (core/danger.ts). */
  risky: { id: string; title: string; reasons: string[] }[];
  /** What each request approved would run, and the digest each form posts back (`view_<id>`). */
  views: BulkView[];
  left: BulkLine[];
  note?: string;
  /** What the reviewer chose: the ticked requests, or all pending requests matching the queue's
   * filter (described in words, with how many the page showed). */
  scope?: { kind: "ticked" } | { kind: "filter"; filter: string; shown: number };
}

/** Approving in bulk shows each request's review view (the agent's words labelled as such, the
 * exact arguments, the preview, the items) and asks; when any of them is one a single approval would
 * confirm (core/danger.ts: the agent's labels, and what will run: its args and preview), it says
 * which and why, and offers all of them, or all but those. Each form carries the digest of every
 * view shown: only those come back approved. */
export const BulkConfirmPage: FC<BulkConfirmProps> = ({
  csrf,
  carry,
  count,
  risky,
  views,
  left,
  note,
  scope,
}) => {
  const safe = count - risky.length;
  const form = (label: string, id: string, skip: boolean) => (
    <form method="post" action="/inbox/decisions">
      <input type="hidden" name="_csrf" value={csrf} />
      <input type="hidden" name="confirmed" value="yes" />
      {carry.map(([name, value]) => (
        <input key={`${name}=${value}`} type="hidden" name={name} value={value} />
      ))}
      {views.map((v) => (
        <input key={`view_${v.id}`} type="hidden" name={`view_${v.id}`} value={v.digest} />
      ))}
      {skip ? risky.map((r) => <input key={r.id} type="hidden" name="skip" value={r.id} />) : null}
      <button type="submit" name="action" value="approve" class="approve" id={id}>
        {label}
      </button>
    </form>
  );
  return (
    <>
      <h1>
        {scope?.kind === "filter"
          ? `Approve all ${count} pending ${count === 1 ? "request" : "requests"} matching this filter?`
          : `Approve ${count} ${count === 1 ? "request" : "requests"}?`}
      </h1>
      {scope?.kind === "filter" ? (
        <p id="bulk-scope">
          “All matching” means the {String(scope.shown)} pending{" "}
          {scope.shown === 1 ? "request" : "requests"} the inbox showed you for{" "}
          <strong>{scope.filter}</strong>
          {scope.shown !== count
            ? `; ${count} of them can be approved here (the others are listed below)`
            : ""}
          . Requests that match it now but were not shown are not decided.
        </p>
      ) : null}
      {note ? <p class="error">{note}</p> : null}
      {risky.length > 0 ? (
        <section class="card confirm" aria-label="confirm" id="bulk-risky">
          <p>
            {String(risky.length)} of them {risky.length === 1 ? "asks" : "ask"} to confirm first:
          </p>
          <ul>
            {risky.map((r) => (
              <li key={r.id} data-request-id={r.id}>
                <a href={`/requests/${r.id}`}>{r.title}</a>
                <ul class="reasons">
                  {r.reasons.map((why) => (
                    <li key={why}>{why}</li>
                  ))}
                </ul>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      <section class="card" id="bulk-views" aria-labelledby="h-views">
        <h2 id="h-views">What each would run ({String(views.length)})</h2>
        {views.length === 0 ? (
          <p class="muted">None of them can be approved in bulk.</p>
        ) : (
          <ol>
            {views.map((v) => (
              <li key={v.id} data-request-id={v.id}>
                <a href={`/requests/${v.id}`}>{v.title}</a>
                <pre class="json">{v.text}</pre>
              </li>
            ))}
          </ol>
        )}
      </section>
      <div class="card actions">
        {views.length > 0
          ? form(
              risky.length > 0 ? `Yes, approve all ${count}` : `Yes, approve these ${count}`,
              "bulk-confirm-all",
              false,
            )
          : null}
        {risky.length > 0 && safe > 0
          ? form(`Approve the other ${safe} only`, "bulk-confirm-safe", true)
          : null}
        <a class="button" href="/">
          Cancel
        </a>
      </div>
      <LeftPending left={left} />
    </>
  );
};
