// GET /v1/events: the audit log as Server-Sent Events. Each event's SSE id is its global `seq`, so a
// client that reconnects with `Last-Event-ID` (browsers' EventSource does so by itself) resumes
// right after the last event it received: events are read back from the store, none is missed.
import { Hono } from "hono";
import { type SSEStreamingApi, streamSSE } from "hono/streaming";
import { isAirlockError } from "../../core/errors.js";
import type { EventType } from "../../core/schemas.js";
import { eventVisibility, loadVisible } from "../access.js";
import type { RouteDeps, ServerEnv } from "../env.js";
import { HttpProblem } from "../problem.js";
import { defineRoute, mount } from "../route.js";
import { eventsQuery } from "../schemas.js";

export const eventsRoute = defineRoute({
  method: "get",
  path: "/v1/events",
  summary:
    "Server-Sent Events of the audit log the caller may see; the SSE id is the event's seq, resume with Last-Event-ID. Ends when the token is revoked; a token may hold a few streams at once (8 by default, then 429 `too_many_streams`)",
  headers: [{ name: "Last-Event-ID", description: "resume after this event id" }],
  query: eventsQuery,
  lists: ["types"],
  responses: {
    200: {
      description: "an event stream; each `data` is an AuditEvent",
      contentType: "text/event-stream",
      schema: "AuditEvent",
    },
  },
  problems: [400, 404],
});

/** How long a client waits before reconnecting after the stream drops (the SSE `retry` field). */
const RETRY_MS = 1000;

export function eventRoutes(deps: RouteDeps): Hono<ServerEnv> {
  const { airlock, logger } = deps;
  const app = new Hono<ServerEnv>();
  /** Open streams per token id, for `maxStreamsPerToken`. */
  const streamsByToken = new Map<string, number>();

  mount(app, "/v1/events", eventsRoute, async (c, { query: q }) => {
    const p = c.var.principal;
    const lastEventId = c.req.header("last-event-id");
    let after = q.after;
    if (lastEventId !== undefined && lastEventId.trim() !== "") {
      if (!/^\d+$/.test(lastEventId.trim())) {
        throw new HttpProblem(
          400,
          "invalid_input",
          `Last-Event-ID must be an event id (a whole number), got \`${lastEventId}\``,
          { field: "Last-Event-ID" },
        );
      }
      after = Number(lastEventId.trim());
    }
    if (q.requestId !== undefined) await loadVisible(airlock, p, q.requestId);
    const types: EventType[] | undefined = q.types === undefined ? undefined : [q.types].flat();
    const open = streamsByToken.get(p.tokenId) ?? 0;
    if (open >= deps.maxStreamsPerToken) {
      throw new HttpProblem(
        429,
        "too_many_streams",
        `this token already has ${open} event streams open, the most this server allows (maxStreamsPerToken); close one, or follow several requests on one stream`,
      );
    }
    // "From now on" is fixed here, before the answer starts, so nothing written after this request
    // arrived can fall between the client connecting and the stream starting.
    const start = after ?? (await airlock.auditHead())?.seq ?? 0;
    const visible = eventVisibility(airlock, p, deps.events.facts);
    // Counted from here: nothing below can fail before the stream's own `finally` runs.
    streamsByToken.set(p.tokenId, open + 1);
    const credential = deps.credentials.watch(c.var.tokenHash);

    return streamSSE(c, async (stream: SSEStreamingApi) => {
      const stop = new AbortController();
      const abort = () => stop.abort();
      stream.onAbort(abort);
      c.req.raw.signal.addEventListener("abort", abort, { once: true });
      deps.shutdown.addEventListener("abort", abort, { once: true });
      // A revoked token ends its streams: nothing more is delivered on its authority.
      credential.signal.addEventListener("abort", abort, { once: true });
      const heartbeat = setInterval(() => {
        void stream.write(": keep-alive\n\n");
      }, deps.heartbeatMs);
      try {
        if (credential.signal.aborted) return;
        // A first message without an id: tells the client the stream is open and where it starts,
        // and leaves its Last-Event-ID as it was.
        await stream.writeSSE({
          event: "ready",
          data: JSON.stringify({ after: start }),
          retry: RETRY_MS,
        });
        // Every type reaches the visibility check, filtered only after it: an escalation changes
        // who may see a request, even on a stream that does not send escalations.
        for await (const e of deps.events.tail({
          after: start,
          signal: stop.signal,
          ...(q.requestId === undefined ? {} : { requestId: q.requestId }),
        })) {
          if (stream.aborted || stream.closed || stop.signal.aborted) break;
          if (!(await visible(e.requestId, e.type))) continue;
          if (types !== undefined && !types.includes(e.type)) continue;
          // The token must still authenticate now that this event is out: one lookup, shared by
          // the token's streams (a revocation elsewhere is seen before the next delivery).
          if (!(await deps.credentials.confirm(c.var.tokenHash, e.seq))) break;
          await stream.writeSSE({ id: String(e.seq), event: e.type, data: JSON.stringify(e) });
        }
      } catch (err) {
        if (!isAirlockError(err, "closed")) logger.warn({ err }, "event stream ended by an error");
      } finally {
        clearInterval(heartbeat);
        c.req.raw.signal.removeEventListener("abort", abort);
        deps.shutdown.removeEventListener("abort", abort);
        credential.signal.removeEventListener("abort", abort);
        credential.release();
        const left = (streamsByToken.get(p.tokenId) ?? 1) - 1;
        if (left > 0) streamsByToken.set(p.tokenId, left);
        else streamsByToken.delete(p.tokenId);
      }
    });
  });

  return app;
}
