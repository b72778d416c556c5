// The queue: requests the reviewer may decide, with filters, search and live countdowns.
import type { FC } from "hono/jsx";
import { RISKS, STATUSES } from "../../../core/schemas.js";
import type { RequestSummary } from "../../../core/store.js";

export interface QueueQuery {
  status: string;
  action: string;
  risk: string;
  q: string;
  sort: "urgent" | "newest";
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
  };
}

/** Filters what the store could not (risk, title search); the store already ordered the rows
 * (most urgent first: the nearest deadline, then requests without one; or the newest first). */
export function arrange(rows: RequestSummary[], q: QueueQuery): RequestSummary[] {
  const needle = q.q.toLowerCase();
  return rows.filter(
    (r) => (!q.risk || r.risk === q.risk) && (!needle || r.title.toLowerCase().includes(needle)),
  );
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

export const QueueRows: FC<{ rows: RequestSummary[] }> = ({ rows }) =>
  rows.length === 0 ? (
    <p class="empty">Nothing waiting for you. New requests appear here as they arrive.</p>
  ) : (
    <table class="queue">
      <thead>
        <tr>
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
        {rows.map((r) => (
          <tr data-request-id={r.id}>
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
              {r.status === "revise" ? "revision requested" : r.status.replace("_", " ")}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );

export const QueuePage: FC<{ rows: RequestSummary[]; query: QueueQuery; actions: string[] }> = ({
  rows,
  query,
  actions,
}) => (
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
              <option value={s} selected={s === query.status}>
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
              <option value={a} selected={a === query.action}>
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
              <option value={r} selected={r === query.risk}>
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
        <button type="submit">Filter</button>
      </form>
    </search>
    <div id="queue" aria-live="polite">
      <QueueRows rows={rows} />
    </div>
  </>
);
