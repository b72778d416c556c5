// GET /openapi.json: an OpenAPI 3.1 document generated from the zod schemas the routes validate
// with (zod 4's JSON Schema output), so the document cannot drift from what the server accepts.
import { z } from "zod";
import { approvalRequestSchema, auditEventSchema, onTimeoutSchema } from "../core/schemas.js";
import { problemSchema } from "./problem.js";
import {
  auditAppendBody,
  auditPage,
  auditQuery,
  cancelBody,
  createRequestBody,
  decisionBody,
  eventsQuery,
  health,
  listQuery,
  requestPage,
  tokenCreateBody,
  tokenCreated,
  tokenList,
  verifyResult,
  waitQuery,
} from "./schemas.js";
import { tokenRecordSchema } from "./tokens.js";

type Json = Record<string, unknown>;

const INPUTS: Record<string, z.ZodType> = {
  RequestInput: createRequestBody,
  DecisionInput: decisionBody,
  CancelInput: cancelBody,
  AuditInput: auditAppendBody,
  TokenInput: tokenCreateBody,
};
const OUTPUTS: Record<string, z.ZodType> = {
  ApprovalRequest: approvalRequestSchema,
  RequestPage: requestPage,
  AuditEvent: auditEventSchema,
  AuditPage: auditPage,
  VerifyResult: verifyResult,
  Problem: problemSchema,
  TokenRecord: tokenRecordSchema,
  TokenCreated: tokenCreated,
  TokenList: tokenList,
  Health: health,
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: string) => ({ "application/json": { schema: ref(name) } });
const problems = (...statuses: number[]): Json =>
  Object.fromEntries(
    statuses.map((s) => [
      String(s),
      {
        description: PROBLEM_TEXT[s] ?? "error",
        content: { "application/problem+json": { schema: ref("Problem") } },
      },
    ]),
  );
const PROBLEM_TEXT: Record<number, string> = {
  400: "malformed input, or JSON nested more than 64 levels deep in a field; `field` names it",
  401: "no token, or an unknown or revoked one (also a long-poll whose token was revoked while it waited)",
  403: "the token's role or principal does not allow this",
  404: "no such request, or one the caller may not see",
  409: "already decided; `request` and `decision` carry the winner",
  413: "body over the size limit, or a field (args, preview, summary, editedArgs) over its own limit; `field` names it",
  415: "body not sent as JSON",
  422: "valid JSON that breaks a rule of the request (selection, edited args, a missing reason)",
  429: "`rate_limited` (the token's rate, or refused tokens from this address; see Retry-After), `quota_exceeded` (too many pending requests or bytes for this requester; `pending` and `pendingBytes` say how many) or `too_many_streams` (event streams open for this token)",
  503: "`store_unavailable` (the storage failed: disk full, read-only, locked, connection lost) or `unavailable` (shutting down); retry after Retry-After",
};
const COMMON = [401, 429, 503];

function schemasFor(entries: Record<string, z.ZodType>, io: "input" | "output"): Json {
  const registry = z.registry<{ id: string }>();
  // Shared by inputs and outputs: registered in both passes so neither emits an anonymous copy.
  registry.add(onTimeoutSchema, { id: "OnTimeout" });
  for (const [id, schema] of Object.entries(entries)) registry.add(schema, { id });
  const out = z.toJSONSchema(registry, {
    io,
    unrepresentable: "any",
    uri: (id) => `#/components/schemas/${id}`,
  });
  const schemas: Json = {};
  for (const [id, schema] of Object.entries(out.schemas)) {
    const { $schema: _s, $id: _i, ...rest } = schema as Json;
    schemas[id] = rest;
  }
  return schemas;
}

function queryParameters(schema: z.ZodObject): Json[] {
  return Object.entries(schema.shape).map(([name, field]) => {
    const { $schema: _s, ...jsonSchema } = z.toJSONSchema(field as z.ZodType, {
      io: "input",
      unrepresentable: "any",
    }) as Json;
    return { name, in: "query", required: false, schema: jsonSchema };
  });
}

const idParam = { name: "id", in: "path", required: true, schema: { type: "string" } };

let cached: Json | undefined;

export function openApiDocument(): Json {
  cached ??= build();
  return cached;
}

function build(): Json {
  return {
    openapi: "3.1.0",
    info: {
      title: "Airlock",
      version: "1",
      description:
        "Human-in-the-loop approval gates. Every route but /healthz needs `Authorization: Bearer <token>`. Errors are RFC 9457 problem details.",
    },
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: { ...schemasFor(OUTPUTS, "output"), ...schemasFor(INPUTS, "input") },
    },
    security: [{ bearer: [] }],
    paths: {
      "/healthz": {
        get: {
          summary:
            "Health; needs no token, never touches the storage. `status` is `degraded` (still 200) while storage faults are answered with 503",
          security: [],
          responses: {
            "200": { description: "serving: `ok` or `degraded`", content: json("Health") },
            "503": { description: "shutting down", content: json("Health") },
          },
        },
      },
      "/openapi.json": {
        get: {
          summary: "This document",
          responses: { "200": { description: "OpenAPI 3.1" }, ...problems(...COMMON) },
        },
      },
      "/metrics": {
        get: {
          summary: "Prometheus metrics (admin, or the server's metrics token)",
          responses: {
            "200": { description: "Prometheus text format", content: { "text/plain": {} } },
            ...problems(403, ...COMMON),
          },
        },
      },
      "/v1/requests": {
        post: {
          summary: "Open a gate (agent, admin). Idempotent by `key` or the Idempotency-Key header",
          parameters: [
            { name: "Idempotency-Key", in: "header", required: false, schema: { type: "string" } },
          ],
          requestBody: { required: true, content: json("RequestInput") },
          responses: {
            "201": {
              description: "created, or the first request with this key",
              content: json("ApprovalRequest"),
            },
            ...problems(400, 403, 409, 413, 415, 422, ...COMMON),
          },
        },
        get: {
          summary:
            "List the requests the caller may see (newest first unless `order` says otherwise), at most 100 per page; with `view=summary` each item is a summary read from columns (no args, preview or items)",
          parameters: queryParameters(listQuery),
          responses: {
            "200": { description: "a page", content: json("RequestPage") },
            ...problems(400, 403, ...COMMON),
          },
        },
      },
      "/v1/requests/{id}": {
        get: {
          summary: "One request",
          parameters: [idParam],
          responses: {
            "200": { description: "the request", content: json("ApprovalRequest") },
            ...problems(404, ...COMMON),
          },
        },
      },
      "/v1/requests/{id}/wait": {
        get: {
          summary:
            "Long-poll: answers when the request is decided or after `timeout` seconds (at most 60), with the request as it is then",
          parameters: [idParam, ...queryParameters(waitQuery)],
          responses: {
            "200": {
              description: "the request; still `pending` if the time ran out",
              content: json("ApprovalRequest"),
            },
            ...problems(400, 404, ...COMMON),
          },
        },
      },
      "/v1/requests/{id}/decisions": {
        post: {
          summary:
            "Decide (reviewer, admin). The reviewer is the token's principal; the channel is recorded as `api` (a body's `channel` is ignored)",
          parameters: [idParam],
          requestBody: { required: true, content: json("DecisionInput") },
          responses: {
            "200": {
              description: "the request after the decision",
              content: json("ApprovalRequest"),
            },
            ...problems(400, 403, 404, 409, 413, 415, 422, ...COMMON),
          },
        },
      },
      "/v1/requests/{id}/cancel": {
        post: {
          summary:
            "Cancel (its requester, admin, or a reviewer who may decide it, who must give a `reason`)",
          parameters: [idParam],
          requestBody: { required: false, content: json("CancelInput") },
          responses: {
            "200": { description: "the cancelled request", content: json("ApprovalRequest") },
            ...problems(400, 403, 404, 409, 422, ...COMMON),
          },
        },
      },
      "/v1/requests/{id}/execution": {
        post: {
          summary:
            "Claim an approved request for execution, once (its requester, admin); a second claim is a 409",
          parameters: [idParam],
          responses: {
            "200": {
              description: "the request, with executedAt and executedBy",
              content: json("ApprovalRequest"),
            },
            ...problems(403, 404, 409, ...COMMON),
          },
        },
      },
      "/v1/events": {
        get: {
          summary:
            "Server-Sent Events of the audit log the caller may see; the SSE id is the event's seq, resume with Last-Event-ID. Ends when the token is revoked; a token may hold a few streams at once (8 by default, then 429 `too_many_streams`)",
          parameters: [
            { name: "Last-Event-ID", in: "header", required: false, schema: { type: "string" } },
            ...queryParameters(eventsQuery),
          ],
          responses: {
            "200": {
              description: "an event stream; each `data` is an AuditEvent",
              content: { "text/event-stream": { schema: ref("AuditEvent") } },
            },
            ...problems(400, 404, ...COMMON),
          },
        },
      },
      "/v1/audit": {
        get: {
          summary: "Audit events of one request, or (admins) of all",
          parameters: queryParameters(auditQuery),
          responses: {
            "200": { description: "a page of events", content: json("AuditPage") },
            ...problems(400, 403, 404, ...COMMON),
          },
        },
        post: {
          summary:
            "Append an auto_executed or notified event (agent, admin); the actor is the token's principal",
          requestBody: { required: true, content: json("AuditInput") },
          responses: {
            "201": { description: "the event as chained", content: json("AuditEvent") },
            ...problems(400, 403, 404, 409, 413, 415, ...COMMON),
          },
        },
      },
      "/v1/audit/verify": {
        get: {
          summary: "Verify the hash chain (admin)",
          responses: {
            "200": { description: "the result", content: json("VerifyResult") },
            ...problems(403, ...COMMON),
          },
        },
      },
      "/v1/tokens": {
        get: {
          summary: "List API tokens (admin); never their secrets",
          responses: {
            "200": { description: "the tokens", content: json("TokenList") },
            ...problems(403, ...COMMON),
          },
        },
        post: {
          summary: "Create an API token (admin); its secret is in this answer only",
          requestBody: { required: true, content: json("TokenInput") },
          responses: {
            "201": { description: "the token with its secret", content: json("TokenCreated") },
            ...problems(400, 403, 413, 415, ...COMMON),
          },
        },
      },
      "/v1/tokens/{id}": {
        delete: {
          summary: "Revoke an API token (admin)",
          parameters: [idParam],
          responses: {
            "200": { description: "the revoked token", content: json("TokenRecord") },
            ...problems(403, 404, ...COMMON),
          },
        },
      },
    },
  };
}
