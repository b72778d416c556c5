// Learned trust in the inbox: the calls people keep approving, each a rule an admin may accept with
// one click (with the requests it would have covered, the distinct people who approved them, and
// what the rule would approve: requesters, risk, quorum, approvers, values), and the rules in
// force, which admins revoke. Widening a rule past what earned it (every requester, a field to any
// value) takes a box ticked on purpose. Reviewers who are not admins see the rules only.
import type { FC } from "hono/jsx";
import type { TrustRule, TrustScope, ValueConstraint } from "../../../core/trust-rule.js";
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

/** A learned value, shown short. */
const shown = (v: string | boolean | null) => {
  const text = JSON.stringify(v);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
};

/** What a field's values may be, in words. */
function allowedValues(c: ValueConstraint): string {
  if (c.any) return "any value (widened by an admin)";
  if (c.varies !== undefined) return `${c.varies}: not approved unless widened`;
  const parts: string[] = [];
  if (c.oneOf) parts.push(`one of ${c.oneOf.map(shown).join(", ")}`);
  if (c.range) parts.push(`a number from ${c.range.min} to ${c.range.max}`);
  if (c.length) parts.push(`${c.length.min} to ${c.length.max} elements`);
  return parts.join("; ") || "nothing";
}

const list = (names: string[]) => (names.length > 0 ? names.join(", ") : "none");

/** The scope of a suggestion or rule: who earned it, and what it approves. */
const ScopeView: FC<{ scope: TrustScope }> = ({ scope }) => (
  <div class="trust-scope">
    <p class="trust-reviewers">
      Earned by the approvals of <strong>{String(scope.reviewers.length)}</strong>{" "}
      {scope.reviewers.length === 1 ? "person" : "distinct people"}: {list(scope.reviewers)}.
    </p>
    <ul>
      <li class="trust-requesters">
        Requesters:{" "}
        {scope.anyRequester
          ? `any (widened by an admin; earned by ${list(scope.requesters)})`
          : list(scope.requesters)}
      </li>
      <li>Risk at most: {scope.maxRisk ?? "none stated"}</li>
      <li>Quorum at most: {String(scope.maxQuorum)}</li>
      <li>
        Approvers named:{" "}
        {scope.approverSets
          .map((s) => (s.length === 0 ? "anyone (none named)" : s.join(" + ")))
          .join("; ")}
      </li>
      {scope.values.map((c) => (
        <li key={c.path} class="trust-value" data-path={c.path}>
          <code>{c.path}</code>: {allowedValues(c)}
        </li>
      ))}
    </ul>
  </div>
);

const Suggestion: FC<{ s: TrustSuggestion; csrf: string }> = ({ s, csrf }) => (
  <li class="trust-suggestion" data-action={s.action} data-shape-hash={s.shapeHash}>
    <p>
      <strong>{s.action}</strong> with args shaped <code>{s.shape}</code>: approved by people{" "}
      <strong>{String(s.streak)}</strong> times in a row, never rejected since.
    </p>
    <p>
      Accepting approves such calls without asking anyone, within what these approvals earned; each
      approval names the rule.
    </p>
    <ScopeView scope={s.scope} />
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
      <fieldset class="trust-widen">
        <legend>Widen past what was earned (recorded in the audit log)</legend>
        <label>
          <input type="checkbox" name="anyRequester" value="true" /> every requester, not only{" "}
          {list(s.scope.requesters)}
        </label>
        {s.scope.values.map((c) => (
          <label key={c.path}>
            <input type="checkbox" name="anyValue" value={c.path} /> any value of{" "}
            <code>{c.path}</code>
          </label>
        ))}
      </fieldset>
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
    {r.scope ? (
      <ScopeView scope={r.scope} />
    ) : (
      <p class="error">
        Accepted before rules kept what earned them: it approves nothing. Revoke it and accept the
        suggestion again.
      </p>
    )}
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
