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
