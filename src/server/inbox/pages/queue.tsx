// The queue: requests the reviewer may decide, with filters, search and live countdowns, grouping,
// and bulk review (tick pending requests, or all that match the filter, and decide them at once).
import type { FC } from "hono/jsx";
import { sameIdentity } from "../../../core/identity.js";
import { RISKS, STATUSES } from "../../../core/schemas.js";
import type { RequestSummary } from "../../../core/store.js";

/** What the queue can be grouped by, so similar gates sit side by side. */
export const GROUPS = ["action", "requester", "correlation"] as const;
export type QueueGroup = (typeof GROUPS)[number];

export interface QueueQuery {
  status: string;
  action: string;
  risk: string;
  q: string;
  sort: "urgent" | "newest";
  /** Empty: not grouped. */
  group: QueueGroup | "";
}

export function readQueueQuery(get: (name: string) => string | undefined): QueueQuery {
  const status = get("status") ?? "pending";
  return {
    status:
      status === "all" || (STATUSES as readonly string[]).includes(status) ? status : "pending",
    action: get("action")?.trim() ?? "",
    risk: (RISKS as readonly string[]).includes(get("risk") ?? "") ? (get("risk") as string) : "",
    q: get("q")?.trim() ?? "",
    sort: get("sort") === "newest" ? "newest" : "urgent",
    group: (GROUPS as readonly string[]).includes(get("group") ?? "")
      ? (get("group") as QueueGroup)
      : "",
  };
}

/** The value a row is grouped by. */
export function groupKey(r: RequestSummary, group: QueueGroup): string {
  if (group === "action") return r.action;
  if (group === "requester") return r.requester;
  return r.correlationId;
}

/** Filters what the store could not (risk, title search); the store already ordered the rows
 * (most urgent first: the nearest deadline, then requests without one; or the newest first). */
export function arrange(rows: RequestSummary[], q: QueueQuery): RequestSummary[] {
  const needle = q.q.toLowerCase();
  const kept = rows.filter(
    (r) => (!q.risk || r.risk === q.risk) && (!needle || r.title.toLowerCase().includes(needle)),
  );
  if (!q.group) return kept;
  // Grouped: each group where its most urgent (or newest) row stood, the store's order inside it.
  const group = q.group;
  const groups = new Map<string, RequestSummary[]>();
  for (const r of kept) {
    const key = groupKey(r, group);
    const list = groups.get(key) ?? [];
    list.push(r);
    groups.set(key, list);
  }
  return [...groups.values()].flat();
}

export const Badge: FC<{ kind: string; text: string | undefined }> = ({ kind, text }) =>
  text ? <span class={`badge ${kind}-${text}`}>{text}</span> : <span class="muted">—</span>;

export const Countdown: FC<{ deadline: number | undefined }> = ({ deadline }) =>
  deadline === undefined ? (
    <span class="muted">no deadline</span>
  ) : (
    <span class="countdown" data-deadline={String(deadline)}>
      {new Date(deadline).toISOString()}
    </span>
  );

/** What "all pending requests matching this filter" stands for on the page as rendered: exactly
 * these requests (the most urgent first), as of `at` (every one was created at or before it). The
 * bulk form posts them back, so a request that arrives later is never decided by that post. */
export interface BulkShown {
  ids: string[];
  at: number;
  /** More requests matched than one page carries (BULK_ROWS). */
  more: boolean;
}

/** "12", or "500+" when more matched than the page carries. */
export const bulkCount = (b: BulkShown) => `${b.ids.length}${b.more ? "+" : ""}`;

export interface QueueRowsProps {
  rows: RequestSummary[];
  bulk: BulkShown;
  query: QueueQuery;
  /** The reviewer: their own requests get no checkbox (somebody else has to decide them). */
  me: string;
  /** More requests match than the page shows. */
  more?: boolean;
}

export const QueueRows: FC<QueueRowsProps> = ({ rows, bulk, query, me, more }) => (
  <>
    {/* The filter the rows were read with, and what "all matching this filter" stands for on this
        page (outside the table, in the bulk form by its `form` attribute, and swapped with the rows
        whenever they are read again). */}
    {(["status", "action", "risk", "q"] as const).map((name) => (
      <input key={name} type="hidden" form="bulk" name={`filter_${name}`} value={query[name]} />
    ))}
    <input type="hidden" form="bulk" name="shown_at" value={String(bulk.at)} />
    <input
      type="hidden"
      form="bulk"
      name="shown_count"
      value={String(bulk.ids.length)}
      data-label={bulkCount(bulk)}
    />
    <input type="hidden" form="bulk" name="shown_ids" value={bulk.ids.join(" ")} />
    {rows.length === 0 ? (
      <p class="empty">Nothing waiting for you. New requests appear here as they arrive.</p>
    ) : (
      <table class="queue">
        <thead>
          <tr>
            <th class="pick">
              <input
                type="checkbox"
                id="pick-shown"
                aria-label="Select every pending request shown"
                title="Select every pending request shown (x selects one)"
              />
            </th>
            <th>Request</th>
            <th>Action</th>
            <th>Risk</th>
            <th>Confidence</th>
            <th>Level</th>
            <th>Requester</th>
            <th>Deadline</th>
            <th>Status</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => {
            const group = query.group ? groupKey(r, query.group) : undefined;
            const prev = rows[i - 1];
            const starts =
              query.group &&
              group !== undefined &&
              (!prev || groupKey(prev, query.group) !== group);
            const size = starts
              ? rows.filter((x) => groupKey(x, query.group as QueueGroup) === group).length
              : 0;
            const decidable = r.status === "pending" && !sameIdentity(r.requester, me);
            return (
              <>
                {starts ? (
                  <tr class="group-head">
                    <th colspan={9} scope="rowgroup">
                      {query.group === "correlation" ? "correlation id" : query.group}: {group}{" "}
                      <span class="muted">({String(size)})</span>
                    </th>
                  </tr>
                ) : null}
                <tr data-request-id={r.id} class="row">
                  <td class="pick">
                    {decidable ? (
                      <input
                        type="checkbox"
                        class="pick"
                        form="bulk"
                        name="ids"
                        value={r.id}
                        aria-label={`Select: ${r.title}`}
                      />
                    ) : null}
                  </td>
                  <td>
                    <a href={`/requests/${r.id}`}>{r.title}</a>
                  </td>
                  <td data-label="Action">{r.action}</td>
                  <td data-label="Risk">
                    <Badge kind="risk" text={r.risk} />
                  </td>
                  <td data-label="Confidence">
                    {r.confidence !== undefined ? String(r.confidence) : "—"}
                  </td>
                  <td data-label="Level">{r.level}</td>
                  <td data-label="Requester">{r.requester}</td>
                  <td data-label="Deadline">
                    {r.status === "pending" ? <Countdown deadline={r.deadline} /> : "—"}
                  </td>
                  <td class={`status-${r.status}`}>
                    {r.status === "revise"
                      ? "revision requested"
                      : r.status === "responded"
                        ? "answered"
                        : r.status.replace("_", " ")}
                  </td>
                </tr>
              </>
            );
          })}
        </tbody>
      </table>
    )}
    {more ? (
      <p class="muted more">
        Showing the first {String(rows.length)} in this order; search or filter to find others.
      </p>
    ) : null}
  </>
);

/** The keys of the queue page, shown by `?`. */
export const QUEUE_KEYS: [string, string][] = [
  ["j / k", "next / previous request"],
  ["x", "select or unselect the request"],
  ["shift-click", "select a range of checkboxes"],
  ["a", "approve the selected requests (or the one under the cursor)"],
  ["r", "reject the selected requests (or the one under the cursor)"],
  ["d", "open the request's details"],
  ["?", "show or hide these keys"],
  ["Esc", "close this panel"],
];

export const QueuePage: FC<{
  rows: RequestSummary[];
  bulk: BulkShown;
  more?: boolean;
  query: QueueQuery;
  actions: string[];
  me: string;
  csrf: string;
}> = ({ rows, bulk, more, query, actions, me, csrf }) => (
  <>
    <h1>Inbox</h1>
    <search>
      <form
        class="filters"
        method="get"
        action="/"
        hx-get="/inbox/queue"
        hx-target="#queue"
        hx-trigger="input changed delay:300ms, change"
        hx-push-url="false"
      >
        <label>
          Search titles
          <input type="search" name="q" value={query.q} placeholder="deploy, invoice…" />
        </label>
        <label>
          Status
          <select name="status">
            {["pending", ...STATUSES.filter((s) => s !== "pending"), "all"].map((s) => (
              <option key={s} value={s} selected={s === query.status}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Action
          <select name="action">
            <option value="">any</option>
            {actions.map((a) => (
              <option key={a} value={a} selected={a === query.action}>
                {a}
              </option>
            ))}
          </select>
        </label>
        <label>
          Risk
          <select name="risk">
            <option value="">any</option>
            {RISKS.map((r) => (
              <option key={r} value={r} selected={r === query.risk}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <label>
          Order
          <select name="sort">
            <option value="urgent" selected={query.sort === "urgent"}>
              most urgent first
            </option>
            <option value="newest" selected={query.sort === "newest"}>
              newest first
            </option>
          </select>
        </label>
        <label>
          Group by
          <select name="group">
            <option value="" selected={query.group === ""}>
              nothing
            </option>
            {GROUPS.map((g) => (
              <option key={g} value={g} selected={g === query.group}>
                {g === "correlation" ? "correlation id" : g}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Filter</button>
      </form>
    </search>
    <form id="bulk" class="bulk card" method="post" action="/inbox/decisions">
      <input type="hidden" name="_csrf" value={csrf} />
      <span id="bulk-kept" hidden></span>
      <div class="bulk-row">
        <span id="picked-count" class="muted" aria-live="polite">
          Tick requests to decide several at once.
        </span>
        <label class="scope">
          <input type="checkbox" name="scope" value="filter" id="scope-filter" /> all{" "}
          <span id="match-count">{bulkCount(bulk)}</span> pending requests matching this filter, not
          only the rows shown (those arriving later stay pending)
        </label>
      </div>
      <div class="bulk-row">
        <label class="bulk-comment">
          <span class="muted">Comment for each (optional)</span>
          <input type="text" name="comment" id="bulk-comment" maxlength={2000} />
        </label>
        <button type="submit" name="action" value="approve" class="approve" id="bulk-approve">
          Approve selected
        </button>
        <button type="submit" name="action" value="reject" class="reject" id="bulk-reject">
          Reject selected
        </button>
        <button type="button" class="keys-toggle" id="keys-toggle" aria-controls="keys-help">
          Keys <kbd>?</kbd>
        </button>
      </div>
    </form>
    <div id="queue" aria-live="polite">
      <QueueRows rows={rows} bulk={bulk} more={more} query={query} me={me} />
    </div>
    <div
      id="keys-help"
      class="overlay"
      role="dialog"
      aria-modal="true"
      aria-label="Keyboard shortcuts"
      hidden
    >
      <div class="card">
        <h2>Keyboard shortcuts</h2>
        <dl class="facts">
          {QUEUE_KEYS.map(([k, what]) => (
            <>
              <dt>
                <kbd>{k}</kbd>
              </dt>
              <dd>{what}</dd>
            </>
          ))}
        </dl>
        <p>
          <button type="button" id="keys-close">
            Close
          </button>
        </p>
      </div>
    </div>
  </>
);
