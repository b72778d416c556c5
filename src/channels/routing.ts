// Which channels hear of which requests: the config's `routes`, each a match on the request (action,
// risk, level, approver group) and on the topic, and the channels it names. Every matching route
// counts, so a request may reach Slack and email at once; a request no route matches notifies nobody.
import { z } from "zod";
import { normalizeIdentity } from "../core/identity.js";
import { OUTBOX_TOPICS, type OutboxTopic } from "../core/outbox.js";
import { type ApprovalRequest, LEVELS, RISKS } from "../core/schemas.js";
import type { OutboxRouter } from "../engine/outbox-drafts.js";

const oneOrMany = <T extends z.ZodType>(item: T) =>
  z
    .union([item, z.array(item).min(1)])
    .transform((v) => (Array.isArray(v) ? v : [v]) as z.output<T>[]);

export const routeSchema = z
  .object({
    match: z
      .object({
        /** An action name, or a pattern where `*` stands for any run of characters (`deploy.*`). */
        action: oneOrMany(z.string().min(1)).optional(),
        risk: oneOrMany(z.enum(RISKS)).optional(),
        level: oneOrMany(z.enum(LEVELS)).optional(),
        /** A user or group among the request's approvers (a request naming none matches no approver). */
        approver: oneOrMany(z.string().min(1)).optional(),
        topic: oneOrMany(z.enum(OUTBOX_TOPICS)).optional(),
      })
      .strict()
      .default({}),
    channels: z.array(z.string().min(1)).min(1),
  })
  .strict();
export type Route = z.output<typeof routeSchema>;

export function createRouter(routes: readonly Route[]): OutboxRouter {
  const compiled = routes.map((route) => ({
    ...route,
    actions: route.match.action?.map(globToRegExp),
    approvers: route.match.approver?.map(normalizeIdentity),
  }));
  return (request: ApprovalRequest, topic: OutboxTopic) => {
    const out = new Set<string>();
    for (const r of compiled) {
      const m = r.match;
      if (r.actions && !r.actions.some((re) => re.test(request.action))) continue;
      if (m.risk && !(request.risk && m.risk.includes(request.risk))) continue;
      if (m.level && !m.level.includes(request.level)) continue;
      if (m.topic && !m.topic.includes(topic)) continue;
      if (
        r.approvers &&
        !request.approvers.some((a) => r.approvers?.includes(normalizeIdentity(a)))
      ) {
        continue;
      }
      for (const c of r.channels) out.add(c);
    }
    return [...out];
  };
}

function globToRegExp(pattern: string): RegExp {
  const escaped = pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*");
  return new RegExp(`^${escaped}$`);
}
