// Learned trust in the inbox: the calls people keep approving, each a rule an admin may accept with
// one click (with the requests it would have covered), and the rules in force, which admins revoke.
// Reviewers who are not admins see the rules only.
import type { FC } from "hono/jsx";
import type { TrustRule } from "../../../core/trust-rule.js";
import type { TrustSuggestion } from "../../../policy/trust-suggestions.js";

export interface TrustPageProps {
  isAdmin: boolean;
  csrf: string;
  /** Approvals in a row a suggestion needs (0: suggestions are off). */
  threshold: number;
  suggestions: TrustSuggestion[];
  rules: TrustRule[];
  notice?: string | undefined;
  error?: string | undefined;
}

const when = (ms: number) => new Date(ms).toISOString().replace("T", " ").slice(0, 16);

const Suggestion: FC<{ s: TrustSuggestion; csrf: string }> = ({ s, csrf }) => (
  <li class="trust-suggestion" data-action={s.action} data-shape-hash={s.shapeHash}>
    <p>
      <strong>{s.action}</strong> with args shaped <code>{s.shape}</code>: approved by people{" "}
      <strong>{String(s.streak)}</strong> times in a row, never rejected since.
    </p>
    <p>Accepting approves such calls without asking anyone; each approval names the rule.</p>
    <details>
      <summary>What it would have covered ({String(s.examples.length)} most recent)</summary>
      <ul>
        {s.examples.map((e) => (
          <li key={e.id}>
            <a href={`/requests/${encodeURIComponent(e.id)}`}>{e.title}</a> — approved by{" "}
            {e.reviewer}, {when(e.decidedAt)}
          </li>
        ))}
      </ul>
    </details>
    <form method="post" action="/inbox/trust/accept">
      <input type="hidden" name="_csrf" value={csrf} />
      <input type="hidden" name="action" value={s.action} />
      <input type="hidden" name="shapeHash" value={s.shapeHash} />
      <button type="submit" class="approve">
        Accept rule
      </button>
    </form>
  </li>
);

const Rule: FC<{ r: TrustRule; csrf: string; isAdmin: boolean }> = ({ r, csrf, isAdmin }) => (
  <li class="trust-rule" data-rule-id={r.id}>
    <p>
      <strong>{r.action}</strong> with args shaped <code>{r.shape}</code> — rule <code>{r.id}</code>
      , accepted by {r.createdBy} on {when(r.createdAt)} after {String(r.approvals)} approvals.
    </p>
    {isAdmin ? (
      <form method="post" action="/inbox/trust/revoke">
        <input type="hidden" name="_csrf" value={csrf} />
        <input type="hidden" name="id" value={r.id} />
        <button type="submit" class="reject">
          Revoke
        </button>
      </form>
    ) : null}
  </li>
);

export const TrustPage: FC<TrustPageProps> = (p) => (
  <>
    <h1>Learned trust</h1>
    {p.notice ? (
      <p class="notice" role="status">
        {p.notice}
      </p>
    ) : null}
    {p.error ? (
      <p class="error" role="alert">
        {p.error}
      </p>
    ) : null}
    {p.isAdmin ? (
      <section id="suggested-rules">
        <h2>Suggested rules</h2>
        {p.threshold === 0 ? (
          <p>Suggestions are turned off on this server.</p>
        ) : p.suggestions.length === 0 ? (
          <p>
            Nothing to suggest: no call has been approved by people {String(p.threshold)} times in a
            row with the same args shape.
          </p>
        ) : (
          <ul class="trust-list">
            {p.suggestions.map((s) => (
              <Suggestion key={`${s.action}:${s.shapeHash}`} s={s} csrf={p.csrf} />
            ))}
          </ul>
        )}
      </section>
    ) : null}
    <section id="active-rules">
      <h2>Rules in force</h2>
      {p.rules.length === 0 ? (
        <p>No learned rule: every call goes to people.</p>
      ) : (
        <ul class="trust-list">
          {p.rules.map((r) => (
            <Rule key={r.id} r={r} csrf={p.csrf} isAdmin={p.isAdmin} />
          ))}
        </ul>
      )}
    </section>
  </>
);
