// The web inbox: server-rendered pages where people review and decide. It authenticates with a
// session cookie (see session.ts) instead of the API's bearer token, so it is mounted before the
// API's authentication; every handler here checks the session itself, and every form its CSRF token.

import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Context } from "hono";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { streamSSE } from "hono/streaming";
import type { Logger } from "pino";
import type { Airlock } from "../../core/engine.js";
import { isAirlockError } from "../../core/errors.js";
import type { ApprovalRequest, DecisionInput } from "../../core/schemas.js";
import { mayDecide } from "../../core/state.js";
import { canSee, decidingGroups, eventVisibility, scopeList } from "../access.js";
import { hasRole, type Principal } from "../env.js";
import { createRateLimiter } from "../rate-limit.js";
import { hashToken, type TokenStore } from "../tokens.js";
import { CSP, FAVICON_SVG, htmxScript, INBOX_CSS, INBOX_JS } from "./assets.js";
import { Layout } from "./layout.js";
import { DashboardPage } from "./pages/dashboard.js";
import { LoginPage } from "./pages/login.js";
import { arrange, QueuePage, QueueRows, readQueueQuery } from "./pages/queue.js";
import { DecisionPanel, type FormError, RequestPage, Trail } from "./pages/request.js";
import { createSessions, csrfMatches, type SessionUser, sameSecret } from "./session.js";

export interface InboxDeps {
  airlock: Airlock;
  tokens: TokenStore;
  logger: Logger;
  shutdown: AbortSignal;
  heartbeatMs: number;
  /** Largest form accepted, in bytes. */
  bodyLimitBytes: number;
}

const PAGE_HEADERS = {
  "content-security-policy": CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
};
/** What the pages refresh on: request changes, and agents' progress on the request page. */
const TYPES = [
  "created",
  "decided",
  "timed_out",
  "cancelled",
  "escalated",
  "decision_recorded",
  "notified",
  "auto_executed",
] as const;

const LOGIN_CSRF_COOKIE = "airlock_login_csrf";

export function inboxRoutes(deps: InboxDeps): Hono {
  const { airlock, logger } = deps;
  const sessions = createSessions(deps.tokens);
  const loginFailures = createRateLimiter({ max: 20, windowMs: 60_000 });
  const app = new Hono();

  const asset = (body: () => string, type: string) => (c: Context) =>
    c.body(body(), 200, {
      "content-type": type,
      "cache-control": "public, max-age=300",
      "x-content-type-options": "nosniff",
    });
  app.get(
    "/assets/inbox.css",
    asset(() => INBOX_CSS, "text/css; charset=utf-8"),
  );
  app.get(
    "/assets/inbox.js",
    asset(() => INBOX_JS, "text/javascript; charset=utf-8"),
  );
  app.get("/assets/htmx.min.js", asset(htmxScript, "text/javascript; charset=utf-8"));
  app.get(
    "/assets/favicon.svg",
    asset(() => FAVICON_SVG, "image/svg+xml"),
  );
  app.get("/favicon.ico", (c) => c.redirect("/assets/favicon.svg", 301));

  // Forms are read whole, so their size is capped before any handler reads them, also when the
  // client sends no Content-Length (chunked).
  const formLimit = bodyLimit({
    maxSize: deps.bodyLimitBytes,
    onError: (c) => c.text("form too large", 413, PAGE_HEADERS),
  });
  for (const path of ["/login", "/logout", "/requests/:id/decide"]) app.post(path, formLimit);

  type PageExtra = Omit<Parameters<typeof Layout>[0], "title" | "children">;
  function page(c: Context, title: string, body: unknown, status = 200, extra?: PageExtra) {
    const html = `<!doctype html>${String(
      <Layout title={title} {...extra}>
        {body as never}
      </Layout>,
    )}`;
    return c.html(html, status as 200, PAGE_HEADERS);
  }

  /** Runs `handler` for a signed-in reviewer; pages send others to the sign-in form. */
  function signedIn(
    handler: (c: Context, u: SessionUser) => Promise<Response>,
    kind: "page" | "fragment" | "form" = "page",
  ) {
    return async (c: Context) => {
      const u = await sessions.current(c);
      if (!u) {
        if (kind === "page") {
          const next = encodeURIComponent(new URL(c.req.url).pathname);
          return c.redirect(`/login?next=${next}`, 303);
        }
        return c.text("sign in first", 401, PAGE_HEADERS);
      }
      if (kind === "form") {
        const length = Number(c.req.header("content-length") ?? "0");
        if (length > deps.bodyLimitBytes) return c.text("form too large", 413, PAGE_HEADERS);
      }
      return handler(c, u);
    };
  }

  const position = async () => (await airlock.store.auditHead())?.seq ?? 0;
  const userProps = (u: SessionUser) => ({
    user: { name: u.principal.name, csrf: u.session.csrf },
  });

  // Sign-in and sign-out.
  // The sign-in form is protected from cross-site posts too (login CSRF) with a double-submit token:
  // a random value in a SameSite=Strict cookie and in the form, which must match.
  function loginPage(c: Context, props: { error?: string; next?: string }, status = 200) {
    const csrf = randomBytes(24).toString("base64url");
    setCookie(c, LOGIN_CSRF_COOKIE, csrf, {
      httpOnly: true,
      sameSite: "Strict",
      path: "/login",
      secure: new URL(c.req.url).protocol === "https:",
      maxAge: 3600,
    });
    return page(c, "Sign in · Airlock", <LoginPage {...props} csrf={csrf} />, status);
  }
  app.get("/login", async (c) => {
    if (await sessions.current(c)) return c.redirect("/", 303);
    return loginPage(c, { next: safeNext(c.req.query("next")) });
  });
  app.post("/login", async (c) => {
    // The peer's own address: a client-chosen header (X-Forwarded-For) would let anyone spread
    // guesses over fresh "addresses", or lock everybody out by failing under the shared default.
    const env = c.env as { incoming?: IncomingMessage } | undefined;
    const address = env?.incoming?.socket?.remoteAddress ?? "local";
    if (!loginFailures.peek(address).ok) {
      return loginPage(c, { error: "Too many failed attempts; wait a minute." }, 429);
    }
    const form = await c.req.parseBody();
    if (!sameSecret(getCookie(c, LOGIN_CSRF_COOKIE), form._csrf)) {
      return loginPage(
        c,
        { error: "This sign-in form is stale or did not come from the inbox; try again." },
        403,
      );
    }
    const token = typeof form.token === "string" ? form.token.trim() : "";
    const next = safeNext(typeof form.next === "string" ? form.next : undefined);
    const hash = token ? hashToken(token) : "";
    const record = token ? await deps.tokens.findByHash(hash) : undefined;
    if (!record || !(record.roles.includes("reviewer") || record.roles.includes("admin"))) {
      loginFailures.take(address);
      const why = record
        ? "This token cannot sign in to the inbox: it needs the reviewer or admin role."
        : "Unknown or revoked token.";
      return loginPage(c, { error: why, next }, 401);
    }
    deleteCookie(c, LOGIN_CSRF_COOKIE, { path: "/login" });
    sessions.start(c, hash);
    logger.info({ reviewer: record.name }, "Inbox sign-in");
    return c.redirect(next, 303);
  });
  app.post(
    "/logout",
    signedIn(async (c, u) => {
      const form = await c.req.parseBody();
      if (!csrfMatches(u.session, form._csrf)) return csrfRefused(c);
      sessions.end(c);
      return c.redirect("/login", 303);
    }, "form"),
  );

  // The queue and its live fragment.
  async function queue(c: Context, p: Principal) {
    const after = await position();
    const query = readQueueQuery((n) => c.req.query(n));
    const filter = scopeList(p, {
      ...(query.status === "all" ? {} : { status: query.status as ApprovalRequest["status"] }),
      ...(query.action ? { action: query.action } : {}),
      limit: 500,
    });
    const rows = filter ? (await airlock.list(filter)).items.filter((r) => canSee(p, r)) : [];
    const pendingFilter = scopeList(p, { status: "pending", limit: 500 });
    const pending = pendingFilter ? (await airlock.list(pendingFilter)).items.length : 0;
    const actions = [
      ...new Set(rows.map((r) => r.action).concat(query.action ? [query.action] : [])),
    ].sort();
    return { query, rows: arrange(rows, query), pending, actions, after };
  }
  app.get(
    "/",
    signedIn(async (c, u) => {
      const q = await queue(c, u.principal);
      return page(
        c,
        `(${q.pending}) Airlock inbox`,
        <QueuePage rows={q.rows} query={q.query} actions={q.actions} />,
        200,
        {
          ...userProps(u),
          live: "queue",
          after: q.after,
        },
      );
    }),
  );
  app.get(
    "/inbox/queue",
    signedIn(async (c, u) => {
      const q = await queue(c, u.principal);
      return c.html(String(<QueueRows rows={q.rows} />), 200, {
        ...PAGE_HEADERS,
        "x-pending-count": String(q.pending),
      });
    }, "fragment"),
  );

  // One request.
  async function visible(p: Principal, id: string): Promise<ApprovalRequest | undefined> {
    try {
      const r = await airlock.get(id);
      return canSee(p, r) ? r : undefined;
    } catch (err) {
      if (isAirlockError(err, "not_found")) return undefined;
      throw err;
    }
  }
  function decidability(p: Principal, r: ApprovalRequest): { canDecide: boolean; whyNot?: string } {
    if (!hasRole(p, "reviewer") && !hasRole(p, "admin")) {
      return { canDecide: false, whyNot: "Your token may read this request but not decide it." };
    }
    if (r.requester === p.name) {
      return {
        canDecide: false,
        whyNot: "You requested this yourself: somebody else has to decide it.",
      };
    }
    if (!mayDecide(r, p.name, decidingGroups(p, r))) {
      return {
        canDecide: false,
        whyNot: `Only ${r.approvers.join(", ")} may decide this request.`,
      };
    }
    if (r.decisions.some((d) => d.outcome === "approved" && d.reviewer === p.name)) {
      return { canDecide: false, whyNot: "You approved already; the quorum needs other people." };
    }
    return { canDecide: true };
  }
  async function renderRequest(
    c: Context,
    u: SessionUser,
    r: ApprovalRequest,
    status = 200,
    extra: { error?: FormError; notice?: string; after?: number } = {},
  ) {
    const after = extra.after ?? (await position());
    const [trail, revisions] = await Promise.all([
      airlock.audit({ requestId: r.id, limit: 500 }),
      revisionChain(u.principal, r),
    ]);
    return page(
      c,
      `${r.title} · Airlock`,
      <RequestPage
        request={r}
        csrf={u.session.csrf}
        {...decidability(u.principal, r)}
        error={extra.error}
        notice={extra.notice}
        trail={trail}
        revisions={revisions}
      />,
      status,
      { ...userProps(u), live: "request", requestId: r.id, after },
    );
  }
  /** Earlier versions of this request (`revisionOf`, newest first), as far as the reviewer may see. */
  async function revisionChain(p: Principal, r: ApprovalRequest): Promise<ApprovalRequest[]> {
    const out: ApprovalRequest[] = [];
    let id = r.revisionOf;
    while (id && out.length < 20) {
      const prev = await visible(p, id);
      if (!prev) break;
      out.push(prev);
      id = prev.revisionOf;
    }
    return out;
  }
  const notFound = (c: Context, u: SessionUser) =>
    page(
      c,
      "Not found · Airlock",
      <p class="card">No such request (or it is not yours to see).</p>,
      404,
      userProps(u),
    );

  app.get(
    "/requests/:id",
    signedIn(async (c, u) => {
      const after = await position();
      const r = await visible(u.principal, c.req.param("id") ?? "");
      if (!r) return notFound(c, u);
      if (r.status === "pending" && !u.session.viewed.has(r.id)) {
        u.session.viewed.add(r.id);
        await airlock.record({
          type: "viewed",
          requestId: r.id,
          actor: u.principal.name,
          data: { channel: "web" },
        });
      }
      return renderRequest(c, u, r, 200, { after });
    }),
  );
  app.get(
    "/inbox/requests/:id/panel",
    signedIn(async (c, u) => {
      const r = await visible(u.principal, c.req.param("id") ?? "");
      if (!r) return c.text("not found", 404, PAGE_HEADERS);
      return c.html(
        String(
          <DecisionPanel request={r} csrf={u.session.csrf} {...decidability(u.principal, r)} />,
        ),
        200,
        PAGE_HEADERS,
      );
    }, "fragment"),
  );

  app.get(
    "/inbox/requests/:id/trail",
    signedIn(async (c, u) => {
      const r = await visible(u.principal, c.req.param("id") ?? "");
      if (!r) return c.text("not found", 404, PAGE_HEADERS);
      const trail = await airlock.audit({ requestId: r.id, limit: 500 });
      return c.html(String(<Trail events={trail} />), 200, PAGE_HEADERS);
    }, "fragment"),
  );

  app.post(
    "/requests/:id/decide",
    signedIn(async (c, u) => {
      const form = await c.req.parseBody({ all: true });
      if (!csrfMatches(u.session, form._csrf)) return csrfRefused(c);
      const r = await visible(u.principal, c.req.param("id") ?? "");
      if (!r) return notFound(c, u);
      const built = decisionFromForm(form, r);
      if ("error" in built) return renderRequest(c, u, r, 422, { error: built.error });
      const input: DecisionInput = {
        ...built.decision,
        reviewer: u.principal.name,
        groups: decidingGroups(u.principal, r),
        channel: "web",
      };
      try {
        await airlock.decide(r.id, input);
      } catch (err) {
        if (!isAirlockError(err)) throw err;
        const fresh = (await visible(u.principal, r.id)) ?? r;
        if (err.code === "conflict" && fresh.status !== "pending") {
          const d = fresh.decision;
          const notice = d
            ? `${d.reviewer} decided this request first (${fresh.status}); your decision was not recorded.`
            : "This request was decided elsewhere first; your decision was not recorded.";
          return renderRequest(c, u, fresh, 409, { notice });
        }
        const status = err.code === "forbidden" ? 403 : err.code === "invalid_input" ? 422 : 409;
        const error: FormError = { form: built.form, message: err.message };
        if (built.form === "edit") error.argsText = built.argsText ?? "";
        if (typeof form.comment === "string") error.comment = form.comment;
        return renderRequest(c, u, fresh, status, { error });
      }
      return c.redirect(`/requests/${r.id}`, 303);
    }, "form"),
  );

  app.get(
    "/dashboard",
    signedIn(async (c, u) => {
      const window = c.req.query("window") === "week" ? "week" : "day";
      const metrics = await airlock.metrics({
        sinceMs: (window === "day" ? 1 : 7) * 24 * 3600 * 1000,
      });
      return page(
        c,
        "Metrics · Airlock",
        <DashboardPage metrics={metrics} window={window} />,
        200,
        userProps(u),
      );
    }),
  );

  // Live updates for the pages: which visible request changed, nothing more.
  app.get(
    "/inbox/stream",
    signedIn(async (c, u) => {
      const seeIt = eventVisibility(airlock, u.principal);
      const asked = c.req.query("after");
      const start = asked && /^\d{1,15}$/.test(asked) ? Number(asked) : await position();
      return streamSSE(c, async (stream) => {
        const stop = new AbortController();
        const abort = () => stop.abort();
        stream.onAbort(abort);
        deps.shutdown.addEventListener("abort", abort, { once: true });
        const heartbeat = setInterval(
          () => void stream.write(": keep-alive\n\n"),
          deps.heartbeatMs,
        );
        try {
          await stream.writeSSE({ event: "ready", data: "{}", retry: 2000 });
          for await (const e of airlock.events({
            after: start,
            signal: stop.signal,
            types: [...TYPES],
          })) {
            if (stream.aborted || stream.closed) break;
            if (!(await seeIt(e.requestId, e.type))) continue;
            await stream.writeSSE({
              id: String(e.seq),
              data: JSON.stringify({ type: e.type, requestId: e.requestId }),
            });
          }
        } catch (err) {
          if (!isAirlockError(err, "closed"))
            logger.warn({ err }, "inbox stream ended by an error");
        } finally {
          clearInterval(heartbeat);
          deps.shutdown.removeEventListener("abort", abort);
        }
      });
    }, "fragment"),
  );

  return app;
}

function csrfRefused(c: Context) {
  return c.text(
    "This form is stale or did not come from the inbox (CSRF check failed). Reload the page and try again.",
    403,
    PAGE_HEADERS,
  );
}

/** Only paths on this site, never `//other.host`. */
function safeNext(next: string | undefined): string {
  return next && /^\/(?!\/)[\w\-./?=&%]*$/.test(next) && !next.startsWith("/login") ? next : "/";
}

type FormValues = Record<string, string | File | (string | File)[]>;

function decisionFromForm(
  form: FormValues,
  r: ApprovalRequest,
):
  | { decision: Omit<DecisionInput, "reviewer">; form: FormError["form"]; argsText?: string }
  | { error: FormError } {
  const str = (v: unknown) => (typeof v === "string" ? v : undefined);
  const action = str(form.action);
  const comment = str(form.comment)?.trim();
  const withComment = comment ? { comment } : {};
  switch (action) {
    case "approve":
      return { decision: { outcome: "approved", ...withComment }, form: "decide" };
    case "approve_selected": {
      const raw = form.items;
      const items = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter(
        (v): v is string => typeof v === "string",
      );
      if (items.length === 0) {
        return {
          error: {
            form: "decide",
            message: "Select at least one item to approve, or reject the request.",
            comment: comment ?? "",
          },
        };
      }
      return { decision: { outcome: "approved", selected: items, ...withComment }, form: "decide" };
    }
    case "reject":
      return { decision: { outcome: "rejected", ...withComment }, form: "decide" };
    case "revise":
      if (!comment && r.metadata.revisionCommentOptional !== true) {
        return {
          error: { form: "revise", message: "Say what should change: a revision needs a comment." },
        };
      }
      return { decision: { outcome: "revise", comment: comment ?? "" }, form: "revise" };
    case "edit": {
      const text = str(form.args) ?? "";
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (err) {
        return {
          error: {
            form: "edit",
            message: `Not valid JSON: ${(err as Error).message}`,
            argsText: text,
          },
        };
      }
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
        return {
          error: {
            form: "edit",
            message: "The arguments must be a JSON object ({ … }).",
            argsText: text,
          },
        };
      }
      return {
        decision: {
          outcome: "approved",
          editedArgs: parsed as Record<string, unknown>,
          ...withComment,
        },
        form: "edit",
        argsText: text,
      };
    }
    default:
      return {
        error: {
          form: "decide",
          message: "Choose approve, approve selected, reject, revise or edit.",
        },
      };
  }
}
