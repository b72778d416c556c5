// Reading JSON bodies and query strings against the routes' zod schemas. Malformed input is a 400
// naming the field; the size limit (413) is enforced before any of this by `limitBody`.
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { z } from "zod";
import { jsonDepthExceeds, MAX_JSON_DEPTH } from "../core/limits.js";
import type { ServerEnv } from "./env.js";
import { HttpProblem } from "./problem.js";
import { screenJson } from "./screen.js";

/** The client went away (or broke the encoding) before its body was complete: its doing, not the
 * server's, so a 400 (it is probably not there to read it), logged at debug level. */
function unreadableBody(cause: unknown): HttpProblem {
  return new HttpProblem(
    400,
    "invalid_input",
    "the request body could not be read to its end (the connection closed mid-body?)",
    { cause },
  );
}

export function limitBody(maxBytes: number): MiddlewareHandler<ServerEnv> {
  const tooLarge = (): never => {
    throw new HttpProblem(
      413,
      "payload_too_large",
      `the request body is larger than the limit of ${maxBytes} bytes`,
      // The rest of the body is not read: the connection cannot carry another request.
      { headers: { connection: "close" } },
    );
  };
  const limit = bodyLimit({ maxSize: maxBytes, onError: tooLarge });
  // A chunked body is read here, before the route: a read that fails is the client's hang-up.
  return async (c, next) => {
    // Hono's bodyLimit asks the request for its body stream first, which makes @hono/node-server
    // build a whole web Request (streams, abort signal) for every request, bodiless ones included.
    // The common cases are decided from the headers alone; the body is then read directly (`text()`).
    if (c.req.header("transfer-encoding") === undefined) {
      const length = c.req.header("content-length");
      if (length !== undefined && Number.parseInt(length, 10) > maxBytes) tooLarge();
      return next();
    }
    let reachedRoute = false;
    try {
      await limit(c, async () => {
        reachedRoute = true;
        await next();
      });
    } catch (err) {
      if (reachedRoute || err instanceof HttpProblem) throw err;
      throw unreadableBody(err);
    }
  };
}

/** Parses the JSON body with `schema`. An empty body counts as `{}` when `optional`. */
export async function readJson<S extends z.ZodType>(
  c: Context<ServerEnv>,
  schema: S,
  options: { optional?: boolean } = {},
): Promise<{ data: z.output<S>; raw: Record<string, unknown> }> {
  let text: string;
  try {
    text = await c.req.text();
  } catch (err) {
    throw unreadableBody(err);
  }
  if (text.trim() === "" && options.optional) return { data: parse(schema, {}), raw: {} };
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/([\w.+-]+\+)?json\b/i.test(type)) {
    throw new HttpProblem(
      415,
      "unsupported_media_type",
      `send the body as JSON with \`Content-Type: application/json\`, not \`${type || "(none)"}\``,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new HttpProblem(
      400,
      "invalid_input",
      `the body is not valid JSON: ${(err as Error).message}`,
    );
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new HttpProblem(400, "invalid_input", "the body must be a JSON object");
  }
  // The body itself is one level; the documents it carries (args, metadata, ...) get MAX_JSON_DEPTH.
  if (jsonDepthExceeds(raw, MAX_JSON_DEPTH + 1)) {
    throw new HttpProblem(
      400,
      "invalid_input",
      `the body nests objects or arrays more than ${MAX_JSON_DEPTH} levels deep inside its fields; flatten it`,
    );
  }
  // Every key and string, not only the fields the schema checks: a store must be able to keep it.
  screenJson(raw);
  return { data: parse(schema, raw), raw: raw as Record<string, unknown> };
}

/** Parses `value` with `schema`, or throws a 400 that names the first offending field. */
export function parse<S extends z.ZodType>(schema: S, value: unknown, what = "body"): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  let path = (issue?.path ?? []).map(String).join(".");
  let message = issue?.message ?? "invalid value";
  if (issue?.code === "unrecognized_keys") {
    const key = issue.keys[0] ?? "";
    path = path ? `${path}.${key}` : key;
    message = `\`${key}\` is not a field this route accepts`;
  }
  // Well-formed input a rule refuses (a name mixing scripts: UNPROCESSABLE in core/schemas.ts) is a
  // 422, as when the engine refuses it; malformed input a 400.
  const unprocessable = issue?.code === "custom" && issue.params?.unprocessable === true;
  throw new HttpProblem(
    unprocessable ? 422 : 400,
    "invalid_input",
    path ? `invalid ${what}: \`${path}\`: ${message}` : `invalid ${what}: ${message}`,
    path ? { field: path } : {},
  );
}

/** The query string as an object: a key given once is a string, a repeated key an array. The
 * `lists` keys also take comma-separated values (`?status=pending,approved`). */
export function queryObject(
  c: Context<ServerEnv>,
  lists: readonly string[] = [],
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, values] of Object.entries(c.req.queries())) {
    const parts = lists.includes(key) ? values.flatMap((v) => v.split(",")) : values;
    const kept = parts.map((v) => v.trim()).filter((v) => v !== "");
    if (kept.length === 0) continue;
    out[key] = kept.length === 1 ? (kept[0] as string) : kept;
  }
  return out;
}
