// /v1/tickets: take and finish tickets (src/engine/tickets.ts), the once-only right to go on that the
// adapters' resumers take before resuming a parked run. Any token that may open gates (agent, admin)
// may take one; its scope is the token's principal (one agent cannot take or block another's), and
// so is the holder's name (a random part follows it). A ticket is not a request: no listing, count,
// metric or quota sees it.
import { Hono } from "hono";
import { z } from "zod";
import { textProblem } from "../../core/text.js";
import { MAX_TICKET_LEASE_MS, type Ticket } from "../../engine/tickets.js";
import type { RouteDeps, ServerEnv } from "../env.js";
import { HttpProblem } from "../problem.js";
import { defineRoute, mount } from "../route.js";

const PREFIX = "/v1/tickets";

/** Text a store can keep (core/text.ts), of 1 to `max` characters. */
const text = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .superRefine((s, ctx) => {
      const why = textProblem(s);
      if (why) ctx.addIssue({ code: "custom", message: why });
    });

export const takeTicketBody = z
  .object({
    key: text(200),
    /** The holder an earlier take answered: renews its lease while it still holds the ticket. */
    holder: text(414).optional(),
    /** How long the take holds unless renewed or finished. @default 300000 */
    leaseMs: z.number().int().min(1).max(MAX_TICKET_LEASE_MS).optional(),
  })
  .strict();

export const finishTicketBody = z.object({ key: text(200), holder: text(414) }).strict();

export const ticketSchema = z.object({
  /** True: this take holds the ticket until `expiresAt`. False: another holder does, or it is
   * `finished`. */
  taken: z.boolean(),
  key: z.string(),
  holder: z.string(),
  expiresAt: z.number(),
  /** Only when not taken: the ticket is finished and will never be taken again. */
  finished: z.boolean().optional(),
});

export const ticketFinished = z.object({
  /** False when another holder took the ticket over after the lease ran out. */
  finished: z.boolean(),
});

export const takeTicketRoute = defineRoute({
  method: "post",
  path: PREFIX,
  summary:
    "Take a ticket (agent, admin): of all takes of one key at once, one gets it, held until its lease runs out unless renewed (the same `holder` again) or finished; a ticket whose holder died is taken over after its lease. The scope of the key, and the holder's name, are the token's principal",
  roles: ["agent", "admin"],
  body: { schema: takeTicketBody, component: "TicketInput", required: true },
  responses: {
    200: { description: "taken, or who holds it (or that it is finished)", schema: "Ticket" },
  },
  problems: [400, 403, 413, 415, 422],
});

export const finishTicketRoute = defineRoute({
  method: "post",
  path: `${PREFIX}/finish`,
  summary:
    "Finish a ticket the caller's take holds (agent, admin): it is never taken again. `finished: false` when another holder took it over",
  roles: ["agent", "admin"],
  body: { schema: finishTicketBody, component: "TicketFinish", required: true },
  responses: { 200: { description: "whether it is finished", schema: "TicketFinished" } },
  problems: [400, 403, 413, 415, 422],
});

export const TICKET_ROUTES = [takeTicketRoute, finishTicketRoute];

export function ticketRoutes(deps: RouteDeps): Hono<ServerEnv> {
  const app = new Hono<ServerEnv>();

  mount(app, PREFIX, takeTicketRoute, async (c, { body }) => {
    const p = c.var.principal;
    if (body.holder !== undefined && !body.holder.startsWith(`${p.name}#`)) {
      throw new HttpProblem(
        403,
        "forbidden",
        `a holder named by the token of ${p.name} starts with \`${p.name}#\`: renew with the holder a take answered`,
        { field: "holder" },
      );
    }
    const ticket: Ticket = await deps.airlock.takeTicket(body.key, {
      requester: p.name,
      by: p.name,
      ...(body.holder === undefined ? {} : { holder: body.holder }),
      ...(body.leaseMs === undefined ? {} : { leaseMs: body.leaseMs }),
    });
    return c.json(ticket);
  });

  mount(app, PREFIX, finishTicketRoute, async (c, { body }) => {
    const p = c.var.principal;
    const finished = await deps.airlock.finishTicket(body.key, {
      requester: p.name,
      holder: body.holder,
    });
    return c.json({ finished });
  });

  return app;
}
