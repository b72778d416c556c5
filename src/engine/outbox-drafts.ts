// Which outbox messages a change writes: for each audit event that notifies (TOPIC_OF_EVENT), one
// message per channel the router names for the request as it stands after the change. The drafts go
// to the store with the change itself, so a message exists exactly when its change was committed.
import { newMessageId } from "../core/ids.js";
import { type OutboxDraft, type OutboxTopic, TOPIC_OF_EVENT } from "../core/outbox.js";
import type { ApprovalRequest, AuditDraft } from "../core/schemas.js";

/** Names the configured channels to notify of `topic` on `request` (none: an empty list). */
export type OutboxRouter = (request: ApprovalRequest, topic: OutboxTopic) => readonly string[];

export function outboxDrafts(
  router: OutboxRouter | undefined,
  request: ApprovalRequest,
  events: readonly AuditDraft[],
  now: number,
): OutboxDraft[] {
  if (!router) return [];
  const drafts: OutboxDraft[] = [];
  for (const event of events) {
    const topic = TOPIC_OF_EVENT[event.type];
    if (!topic) continue;
    for (const target of new Set(router(request, topic))) {
      drafts.push({
        id: newMessageId(now),
        target,
        topic,
        requestId: request.id,
        payload: {
          event: { type: event.type, actor: event.actor, at: event.at, data: event.data },
        },
      });
    }
  }
  return drafts;
}
