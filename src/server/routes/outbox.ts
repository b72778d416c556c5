// GET /v1/outbox: the delivery log (admins): every notification the outbox holds, with its target,
// status, attempts, last error and when it was delivered. Payloads were redacted when written;
// channel secrets are never part of a message.
import { Hono } from "hono";
import { z } from "zod";
import { OUTBOX_STATUSES, OUTBOX_TOPICS } from "../../core/outbox.js";
import type { RouteDeps, ServerEnv } from "../env.js";
import { defineRoute, mount } from "../route.js";

const PREFIX = "/v1/outbox";

export const outboxQuery = z.object({
  requestId: z.string().min(1).max(200).optional(),
  target: z.string().min(1).max(64).optional(),
  status: z.enum(OUTBOX_STATUSES).optional(),
  topic: z.enum(OUTBOX_TOPICS).optional(),
  /** The last id of the previous page. */
  after: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
});

const outboxMessage = z.object({
  id: z.string(),
  target: z.string(),
  topic: z.enum(OUTBOX_TOPICS),
  requestId: z.string().optional(),
  payload: z.record(z.string(), z.unknown()),
  status: z.enum(OUTBOX_STATUSES),
  attempts: z.number().int(),
  availableAt: z.number(),
  createdAt: z.number(),
  updatedAt: z.number(),
  leaseOwner: z.string().optional(),
  leaseUntil: z.number().optional(),
  lastError: z.string().optional(),
  receipt: z.record(z.string(), z.unknown()).optional(),
  deliveredAt: z.number().optional(),
});
export const outboxPage = z.object({
  items: z.array(outboxMessage),
  /** Pass as `after` for the next page; absent on the last page. */
  nextAfter: z.string().optional(),
});

export const listOutboxRoute = defineRoute({
  method: "get",
  path: PREFIX,
  summary: "The outbox's delivery log (admin): notifications, their targets, attempts and results",
  roles: ["admin"],
  query: outboxQuery,
  responses: { 200: { description: "a page of messages, oldest first", schema: "OutboxPage" } },
  problems: [400, 403],
});

export const OUTBOX_ROUTES = [listOutboxRoute];

const DEFAULT_LIMIT = 100;

export function outboxRoutes(deps: RouteDeps): Hono<ServerEnv> {
  const app = new Hono<ServerEnv>();
  mount(app, PREFIX, listOutboxRoute, async (c, { query: q }) => {
    const limit = q.limit ?? DEFAULT_LIMIT;
    const items = await deps.airlock.outbox({ ...q, limit });
    const last = items[items.length - 1];
    return c.json(items.length === limit && last ? { items, nextAfter: last.id } : { items });
  });
  return app;
}
