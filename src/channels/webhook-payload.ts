// The documented body of an outgoing webhook: `{ type: "request.<topic>", timestamp, data }`, where
// `data` is the outbox message's payload passed through as it was written (the event that caused it)
// plus `request`, a summary of the request as it stands when the attempt is made.
import type { Redactor } from "../audit/redact.js";
import type { OutboxMessage, OutboxTopic } from "../core/outbox.js";
import type { ApprovalRequest, Decision } from "../core/schemas.js";
import { outsideView } from "./outside.js";

export interface WebhookRequestSummary {
  id: string;
  action: string;
  title: string;
  status: ApprovalRequest["status"];
  risk?: ApprovalRequest["risk"];
  requester: string;
  approvers: string[];
  /** ISO-8601; only while pending. */
  deadline?: string;
  /** The terminal decision, once there is one. */
  decision?: {
    outcome: Decision["outcome"];
    method: Decision["method"];
    reviewer: string;
    channel: Decision["channel"];
    comment?: string;
    /** ISO-8601. */
    decidedAt: string;
  };
  /** The request's page in the inbox. */
  url: string;
}

export interface WebhookEvent {
  type: `request.${OutboxTopic}`;
  /** When the message was written (the event happened), ISO-8601; the same on every retry. */
  timestamp: string;
  /** The outbox payload (`{ event: { type, actor, at, data } }` for request events) and `request`,
   * absent for a `test` message or a request that no longer exists. */
  data: Record<string, unknown> & { request?: WebhookRequestSummary };
}

export function webhookEvent(
  message: OutboxMessage,
  request: ApprovalRequest | undefined,
  publicUrl: string,
  redactor: Redactor,
): WebhookEvent {
  // The receiver is a third party: the payload (redacted when written, perhaps by an older list)
  // and the request's title and comment pass the one redaction again as they leave.
  const data: WebhookEvent["data"] = { ...redactor.redact(message.payload) };
  if (request !== undefined) {
    data.request = requestSummary(outsideView(request, redactor), publicUrl);
  }
  return {
    type: `request.${message.topic}`,
    timestamp: new Date(message.createdAt).toISOString(),
    data,
  };
}

export function requestSummary(request: ApprovalRequest, publicUrl: string): WebhookRequestSummary {
  const summary: WebhookRequestSummary = {
    id: request.id,
    action: request.action,
    title: request.title,
    status: request.status,
    requester: request.requester,
    approvers: [...request.approvers],
    url: `${publicUrl.replace(/\/+$/, "")}/requests/${encodeURIComponent(request.id)}`,
  };
  if (request.risk !== undefined) summary.risk = request.risk;
  if (request.deadline !== undefined) summary.deadline = new Date(request.deadline).toISOString();
  const d = request.decision;
  if (d !== undefined) {
    summary.decision = {
      outcome: d.outcome,
      method: d.method,
      reviewer: d.reviewer,
      channel: d.channel,
      ...(d.comment === undefined ? {} : { comment: d.comment }),
      decidedAt: new Date(d.decidedAt).toISOString(),
    };
  }
  return summary;
}
