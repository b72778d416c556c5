// The answer to a bulk decision: which requests were decided, and, apart, exactly those someone
// else decided first (with who and how), then any the reviewer could not decide and why.
import type { FC } from "hono/jsx";
import type { Decision } from "../../../core/schemas.js";

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
  /** Set when "all matching the filter" matched more than one call decides. */
  note?: string;
}

const Title: FC<{ line: BulkLine }> = ({ line }) => (
  <a href={`/requests/${line.id}`}>{line.title ?? line.id}</a>
);

export const BulkResultPage: FC<BulkResultProps> = ({ verb, decided, first, failed, note }) => (
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
  </>
);

export interface BulkConfirmProps {
  csrf: string;
  /** Every request to approve, the risky ones included. */
  ids: string[];
  risky: { id: string; title: string; why: string }[];
  comment: string;
  note?: string;
}

/** Approving in bulk asks first when any of the requests is one a single approval would confirm
 * (high or critical risk, or an action that is hard to undo): all of them, or all but those. */
export const BulkConfirmPage: FC<BulkConfirmProps> = ({ csrf, ids, risky, comment, note }) => {
  const riskyIds = new Set(risky.map((r) => r.id));
  const safe = ids.filter((id) => !riskyIds.has(id));
  const form = (list: string[], label: string, id: string) => (
    <form method="post" action="/inbox/decisions">
      <input type="hidden" name="_csrf" value={csrf} />
      <input type="hidden" name="confirmed" value="yes" />
      <input type="hidden" name="comment" value={comment} />
      {list.map((rid) => (
        <input key={rid} type="hidden" name="ids" value={rid} />
      ))}
      <button type="submit" name="action" value="approve" class="approve" id={id}>
        {label}
      </button>
    </form>
  );
  return (
    <>
      <h1>Approve {String(ids.length)} requests?</h1>
      {note ? <p class="error">{note}</p> : null}
      <section class="card confirm" aria-label="confirm" id="bulk-risky">
        <p>
          {String(risky.length)} of them {risky.length === 1 ? "is" : "are"} high risk or hard to
          undo:
        </p>
        <ul>
          {risky.map((r) => (
            <li key={r.id} data-request-id={r.id}>
              <a href={`/requests/${r.id}`}>{r.title}</a> <span class="muted">({r.why})</span>
            </li>
          ))}
        </ul>
        <div class="actions">
          {form(ids, `Yes, approve all ${ids.length}`, "bulk-confirm-all")}
          {safe.length > 0
            ? form(safe, `Approve the other ${safe.length} only`, "bulk-confirm-safe")
            : null}
          <a class="button" href="/">
            Cancel
          </a>
        </div>
      </section>
    </>
  );
};
