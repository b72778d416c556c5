// One definition per API route: its method and path, who may call it, the query and body it reads,
// and every status it can answer. `mount` serves it (validating the query and body with those same
// schemas, once) and openapi.ts writes the document from the same objects, so neither can drift.
//
// The shape follows @hono/zod-openapi's `createRoute` (method, path with `{param}`, request, responses),
// but the document is generated with zod's own JSON Schema output: zod-to-openapi, under
// @hono/zod-openapi, overflows the stack on the recursive schemas (escalations, JSON values).
import type { Context, Hono } from "hono";
import type { z } from "zod";
import { requireRole } from "./auth.js";
import { parse, queryObject, readJson } from "./body.js";
import type { ServerEnv } from "./env.js";
import type { Role } from "./tokens.js";

/** A success answer: a named component schema, or a media type of its own (streams, text). */
export interface SuccessResponse {
  description: string;
  /** The component schema of the JSON body (see openapi.ts). */
  schema?: string;
  /** Another media type than JSON, with an optional component schema for each message. */
  contentType?: string;
}

export interface RouteSpec<
  Q extends z.ZodObject | undefined = z.ZodObject | undefined,
  B extends z.ZodType | undefined = z.ZodType | undefined,
> {
  method: "get" | "post" | "delete";
  /** The full path, parameters as `{id}` (OpenAPI's form). */
  path: string;
  summary: string;
  /** The roles that may call it; absent: any authenticated caller. */
  roles?: readonly Role[];
  /** Served without a token (`security: []`). */
  public?: boolean;
  query?: Q;
  /** Query keys that also take comma-separated values (`?status=pending,approved`). */
  lists?: readonly string[];
  body?: B extends z.ZodType ? { schema: B; component: string; required: boolean } : undefined;
  headers?: readonly { name: string; description: string }[];
  responses: Record<number, SuccessResponse>;
  /** Every problem status it may answer (401, 429 and 503 are added to all but public routes). */
  problems: readonly number[];
}

export interface RouteInput<Q, B> {
  query: Q;
  body: B;
  /** The body as sent (before defaults), for "was this field given" checks and sizes. */
  raw: Record<string, unknown>;
}

type Out<T> = T extends z.ZodType ? z.output<T> : undefined;

/** The status every route, public ones included, may answer: a path or query string holding text no
 * store can keep (screen.ts). */
export const URL_PROBLEMS = [400] as const;

/** Statuses every authenticated route may answer: such a URL, no token, rate limit, storage fault. */
export const COMMON_PROBLEMS = [...URL_PROBLEMS, 401, 429, 503] as const;

export function defineRoute<Q extends z.ZodObject | undefined, B extends z.ZodType | undefined>(
  spec: RouteSpec<Q, B>,
): RouteSpec<Q, B> {
  return spec;
}

/** Serves `spec` on `app` (mounted at `prefix`): role check, then the query and the body read and
 * validated once, then `handler`. */
export function mount<Q extends z.ZodObject | undefined, B extends z.ZodType | undefined>(
  app: Hono<ServerEnv>,
  prefix: string,
  spec: RouteSpec<Q, B>,
  handler: (c: Context<ServerEnv>, input: RouteInput<Out<Q>, Out<B>>) => Promise<Response>,
): void {
  if (!spec.path.startsWith(prefix)) {
    throw new TypeError(`route ${spec.path} is not under ${prefix}`);
  }
  const local = spec.path.slice(prefix.length).replace(/\{(\w+)\}/g, ":$1") || "/";
  const run = async (c: Context<ServerEnv>) => {
    const query = (
      spec.query ? parse(spec.query, queryObject(c, spec.lists ?? []), "query") : undefined
    ) as Out<Q>;
    let body: unknown;
    let raw: Record<string, unknown> = {};
    if (spec.body) {
      const read = await readJson(c, spec.body.schema, { optional: !spec.body.required });
      body = read.data;
      raw = read.raw;
    }
    return handler(c, { query, body: body as Out<B>, raw });
  };
  if (spec.roles) app.on(spec.method.toUpperCase(), local, requireRole(...spec.roles), run);
  else app.on(spec.method.toUpperCase(), local, run);
}
