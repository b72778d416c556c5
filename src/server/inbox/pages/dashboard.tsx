// Review metrics for people: approval, revision and timeout rates and how long reviews take.
import type { FC } from "hono/jsx";
import type { Metrics, MetricsBucket } from "../../../core/metrics.js";

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const dur = (ms: number | undefined) =>
  ms === undefined
    ? "—"
    : ms < 1000
      ? `${Math.round(ms)} ms`
      : ms < 120_000
        ? `${(ms / 1000).toFixed(1)} s`
        : `${(ms / 60_000).toFixed(1)} min`;

/** Cancelled requests were withdrawn, not decided: counted apart, and left out of the rates. */
const cancelledOf = (b: MetricsBucket) => b.byOutcome.cancelled ?? 0;

const Row: FC<{ name: string; b: MetricsBucket }> = ({ name, b }) => (
  <tr>
    <td class="name">{name}</td>
    <td data-label="Decided">{String(b.total - cancelledOf(b))}</td>
    <td data-label="Cancelled">{String(cancelledOf(b))}</td>
    <td data-label="Approval rate">{pct(b.approvalRate)}</td>
    <td data-label="Revision rate">{pct(b.revisionRate)}</td>
    <td data-label="Timeouts">{pct(b.timeoutRate)}</td>
    <td data-label="Review p50">{dur(b.reviewDurationMs?.p50)}</td>
    <td data-label="p90">{dur(b.reviewDurationMs?.p90)}</td>
    <td data-label="p99">{dur(b.reviewDurationMs?.p99)}</td>
  </tr>
);

export const DashboardPage: FC<{ metrics: Metrics; window: "day" | "week" }> = ({
  metrics,
  window,
}) => (
  <>
    <h1>Review metrics</h1>
    <p>
      Over the last {window}: {String(metrics.total - cancelledOf(metrics))} decided,{" "}
      {String(cancelledOf(metrics))} cancelled, {String(metrics.pending)} pending now.{" "}
      {window === "day" ? (
        <a href="/dashboard?window=week">Show the last week</a>
      ) : (
        <a href="/dashboard?window=day">Show the last day</a>
      )}
    </p>
    <table class="queue">
      <thead>
        <tr>
          <th>Action</th>
          <th>Decided</th>
          <th>Cancelled</th>
          <th>Approval rate</th>
          <th>Revision rate</th>
          <th>Timeouts</th>
          <th>Review p50</th>
          <th>p90</th>
          <th>p99</th>
        </tr>
      </thead>
      <tbody>
        <Row name="all actions" b={metrics} />
        {Object.entries(metrics.byAction)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([name, b]) => (
            <Row name={name} b={b} />
          ))}
      </tbody>
    </table>
    <p class="muted">
      Rates are over the decided requests: a cancelled one (withdrawn by its agent or an admin, or
      at a demo restart) counts in none. Review durations count human decisions only (not automatic
      approvals or timeouts).
    </p>
  </>
);
