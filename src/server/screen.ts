// One screen for the text a request carries, whatever part of it: the path (route parameters such as
// `:id`), the query string, a JSON body, a form. Text no store can keep (a NUL, a lone surrogate:
// core/text.ts) and percent-escapes that are not UTF-8 are a 400 `invalid_input` naming the part,
// before any route reads it. Without it such text reached the store: PostgreSQL refused it with a
// driver error (a 500), SQLite stored or looked it up, so the two stores answered differently.
import type { MiddlewareHandler } from "hono";
import { MAX_JSON_DEPTH } from "../core/limits.js";
import { jsonProblem, textProblem } from "../core/text.js";
import type { ServerEnv } from "./env.js";
import { HttpProblem } from "./problem.js";

/** Runs of percent-escapes: each must decode, as a whole, to UTF-8 text. */
const ESCAPES = /(?:%[0-9A-Fa-f]{2})+/g;

function refuse(where: string, why: string, field?: string): never {
  throw new HttpProblem(400, "invalid_input", `${where} ${why}`, field ? { field } : {});
}

/** `raw` (a part of a URL, still percent-encoded) decoded; refused when an escape is not UTF-8 or the
 * text is not storable. A `%` not followed by two hex digits stays as it is (as the router reads it). */
function decodePart(raw: string, where: string): string {
  const decoded = raw.replace(ESCAPES, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      // %ED%A0%80 (a UTF-16 surrogate written as UTF-8), %FF, a cut sequence...
      return refuse(
        where,
        `holds percent-escapes that are not UTF-8 text (\`${run.slice(0, 36)}\`): encode text as UTF-8`,
      );
    }
  });
  const why = textProblem(decoded);
  if (why) refuse(where, why);
  return decoded;
}

/** Refuses a request target (`/path?query`) whose path or query holds text no store can keep. */
export function screenTarget(target: string): void {
  const hash = target.indexOf("#");
  const bare = hash === -1 ? target : target.slice(0, hash);
  const q = bare.indexOf("?");
  decodePart(q === -1 ? bare : bare.slice(0, q), "the path");
  if (q === -1) return;
  for (const pair of bare.slice(q + 1).split("&")) {
    const eq = pair.indexOf("=");
    const rawKey = eq === -1 ? pair : pair.slice(0, eq);
    const key = decodePart(rawKey.replace(/\+/g, " "), "a query parameter's name");
    if (eq !== -1) {
      decodePart(pair.slice(eq + 1).replace(/\+/g, " "), `the query parameter \`${key}\``);
    }
  }
}

/** Middleware: the request's path and query string through `screenTarget`, for every route. */
export function screenUrl(): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    const url = c.req.url;
    // The target starts at the first "/" after the scheme and authority.
    const start = url.indexOf("/", url.indexOf("://") + 3);
    if (start !== -1) screenTarget(url.slice(start));
    await next();
  };
}

/** Refuses a parsed JSON body holding a key or string no store can keep, naming its field. */
export function screenJson(body: unknown, what = "body"): void {
  // The body is one level; the documents in it (args, metadata...) get MAX_JSON_DEPTH below it.
  const problem = jsonProblem(body, MAX_JSON_DEPTH + 1);
  if (!problem) return;
  const path = problem.path.map(String).join(".");
  refuse(
    path ? `invalid ${what}: \`${path}\`:` : `invalid ${what}:`,
    problem.message,
    path || undefined,
  );
}

/** Refuses a parsed form (field names and text values; files are not text) holding text no store
 * can keep. */
export function screenForm(form: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(form)) {
    const nameProblem = textProblem(name);
    if (nameProblem) refuse("a form field's name", nameProblem);
    for (const v of Array.isArray(value) ? value : [value]) {
      if (typeof v !== "string") continue;
      const why = textProblem(v);
      if (why) refuse(`the form field \`${name}\``, why, name);
    }
  }
}
