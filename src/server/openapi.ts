// GET /openapi.json: an OpenAPI 3.1 document written from the route definitions themselves (each
// route's `defineRoute`: path, roles, query, body, answers) and the zod schemas they validate with
// (zod 4's JSON Schema output), so the document cannot drift from what the server serves.
import { z } from "zod";
import { problemSchema } from "../core/problem.js";
import { approvalRequestSchema, auditEventSchema, onTimeoutSchema } from "../core/schemas.js";
import { COMMON_PROBLEMS, defineRoute, type RouteSpec, URL_PROBLEMS } from "./route.js";
import { AUDIT_ROUTES } from "./routes/audit.js";
import { DECISION_ROUTES, decisionResults } from "./routes/decisions.js";
import { EMBED_ROUTES, embedToken } from "./routes/embed.js";
import { eventsRoute } from "./routes/events.js";
import { EXECUTION_ROUTES } from "./routes/execution.js";
import { OUTBOX_ROUTES, outboxPage } from "./routes/outbox.js";
import { REQUEST_ROUTES } from "./routes/requests.js";
import { TICKET_ROUTES, ticketFinished, ticketSchema } from "./routes/tickets.js";
import { TOKEN_ROUTES } from "./routes/tokens.js";
import {
  TRUST_ROUTES,
  trustRuleList,
  trustRuleSchema,
  trustSuggestionList,
} from "./routes/trust.js";
import { reviewViewBody, VIEW_ROUTES } from "./routes/view.js";
import {
  auditPage,
  health,
  requestPage,
  tokenCreated,
  tokenList,
  verifyResult,
} from "./schemas.js";
import { tokenRecordSchema } from "./tokens.js";

type Json = Record<string, unknown>;

export const healthRoute = defineRoute({
  method: "get",
  path: "/healthz",
  summary:
    "Health; needs no token, never touches the storage. `status` is `degraded` (still 200) while storage faults are answered with 503; 200 means an API request with a valid token is served",
  public: true,
  responses: {
    200: { description: "serving: `ok` or `degraded`", schema: "Health" },
    503: { description: "starting (tokens not stored yet) or shutting down", schema: "Health" },
  },
  problems: [],
});

export const openApiRoute = defineRoute({
  method: "get",
  path: "/openapi.json",
  summary:
    "This document (any token; in a browser, the inbox's sign-in session is enough, so the link the server prints opens once signed in)",
  responses: { 200: { description: "OpenAPI 3.1", contentType: "application/json" } },
  problems: [],
});

export const metricsRoute = defineRoute({
  method: "get",
  path: "/metrics",
  summary: "Prometheus metrics (admin, or the server's metrics token)",
  roles: ["admin"],
  responses: { 200: { description: "Prometheus text format", contentType: "text/plain" } },
  problems: [403],
});

/** Every API route, in the document's order. */
export const API_ROUTES: readonly RouteSpec[] = [
  healthRoute,
  openApiRoute,
  metricsRoute,
  ...REQUEST_ROUTES,
  ...EXECUTION_ROUTES,
  ...VIEW_ROUTES,
  ...DECISION_ROUTES,
  eventsRoute,
  ...AUDIT_ROUTES,
  ...TOKEN_ROUTES,
  ...OUTBOX_ROUTES,
  ...EMBED_ROUTES,
  ...TRUST_ROUTES,
  ...TICKET_ROUTES,
] as RouteSpec[];

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
  OutboxPage: outboxPage,
  DecisionResults: decisionResults,
  EmbedToken: embedToken,
  TrustRule: trustRuleSchema,
  TrustRuleList: trustRuleList,
  TrustSuggestionList: trustSuggestionList,
  Ticket: ticketSchema,
  TicketFinished: ticketFinished,
  ReviewView: reviewViewBody,
};

const PROBLEM_TEXT: Record<number, string> = {
  400: "malformed input, JSON nested more than 64 levels deep in a field, or text no store can keep (a NUL, a lone surrogate, percent-escapes that are not UTF-8) in the path, the query or the body; `field` names the field when there is one",
  401: "no token, or an unknown or revoked one (also a long-poll whose token was revoked while it waited)",
  403: "the token's role or principal does not allow this",
  404: "no such request, or one the caller may not see",
  409: "`conflict` (already decided: `request` and `decision` carry the winner) or `view_changed` (the `viewDigest` sent is not the review view the request has now: `request` carries it as it is; look again before deciding)",
  413: "body over the size limit, or a field (args, preview, summary, editedArgs) over its own limit; `field` names it",
  415: "body not sent as JSON",
  422: "valid JSON that breaks a rule of the request (selection, edited args, a missing reason)",
  429: "`rate_limited` (the token's rate, or refused tokens from this address; see Retry-After), `quota_exceeded` (too many pending requests or bytes for this requester; `pending` and `pendingBytes` say how many) or `too_many_streams` (event streams open for this token)",
  503: "`store_unavailable` (the storage failed: disk full, read-only, locked, connection lost) or `unavailable` (shutting down); retry after Retry-After",
};

/** The problem statuses `spec` may answer, the common ones included. */
export function problemStatuses(spec: RouteSpec): number[] {
  const all = spec.public
    ? [...spec.problems, ...URL_PROBLEMS]
    : [...spec.problems, ...COMMON_PROBLEMS];
  return [...new Set(all)].sort((a, b) => a - b);
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

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

function operation(spec: RouteSpec): Json {
  const parameters: Json[] = [];
  for (const m of spec.path.matchAll(/\{(\w+)\}/g)) {
    parameters.push({ name: m[1], in: "path", required: true, schema: { type: "string" } });
  }
  for (const h of spec.headers ?? []) {
    parameters.push({
      name: h.name,
      in: "header",
      required: false,
      description: h.description,
      schema: { type: "string" },
    });
  }
  if (spec.query) parameters.push(...queryParameters(spec.query));
  const responses: Json = {};
  for (const [status, r] of Object.entries(spec.responses)) {
    const type = r.contentType ?? "application/json";
    const content =
      r.schema !== undefined
        ? { [type]: { schema: ref(r.schema) } }
        : r.contentType
          ? { [type]: {} }
          : undefined;
    responses[status] = { description: r.description, ...(content ? { content } : {}) };
  }
  for (const s of problemStatuses(spec)) {
    responses[String(s)] = {
      description: PROBLEM_TEXT[s] ?? "error",
      content: { "application/problem+json": { schema: ref("Problem") } },
    };
  }
  return {
    summary: spec.summary,
    ...(spec.public ? { security: [] } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(spec.body
      ? {
          requestBody: {
            required: spec.body.required,
            content: { "application/json": { schema: ref(spec.body.component) } },
          },
        }
      : {}),
    responses,
  };
}

let cached: Json | undefined;

export function openApiDocument(): Json {
  cached ??= build();
  return cached;
}

function build(): Json {
  const inputs: Record<string, z.ZodType> = {};
  const paths: Record<string, Json> = {};
  for (const spec of API_ROUTES) {
    if (spec.body) inputs[spec.body.component] = spec.body.schema;
    paths[spec.path] = { ...paths[spec.path], [spec.method]: operation(spec) };
  }
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
      schemas: { ...schemasFor(OUTPUTS, "output"), ...schemasFor(inputs, "input") },
    },
    security: [{ bearer: [] }],
    paths,
  };
}
