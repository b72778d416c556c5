// The web inbox: server-rendered pages where people review and decide. It authenticates with a
// session cookie (see session.ts) instead of the API's bearer token, so it is mounted before the
// API's authentication; every handler here checks the session itself, and every form its CSRF token.

import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Context, MiddlewareHandler } from "hono";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { csrf } from "hono/csrf";
import { streamSSE } from "hono/streaming";
import type { Logger } from "pino";
import type { ZodType } from "zod";
import { z } from "zod";
import { digestOf, fitView, isViewChanged } from "../../channels/view-fit.js";
import { type RefusalReason, refusalOf } from "../../core/authority.js";
import { needsConfirmation } from "../../core/danger.js";
import { isAirlockError } from "../../core/errors.js";
import { sameIdentity } from "../../core/identity.js";
import { computeMetrics } from "../../core/metrics.js";
import { presentationOf } from "../../core/presentation.js";
import { reviewViewOf, viewDigestOf } from "../../core/review-view.js";
import {
  type ApprovalRequest,
  type AuditEvent,
  type DecisionInput,
  type Status,
  statusSchema,
} from "../../core/schemas.js";
import { isPending, isTerminal } from "../../core/state.js";
import type { ListFilter, OutcomeRow, RequestSummary } from "../../core/store.js";
import type { Airlock } from "../../engine/engine.js";
import type { LearnedTrust } from "../../policy/learned-trust.js";
import { actorFor, canSee, eventVisibility, scopeList } from "../access.js";
import { hasRole, type Principal } from "../env.js";
import { openApiDocument } from "../openapi.js";
import { createRateLimiter, type RateLimitOptions } from "../rate-limit.js";
import {
  type DecisionItem,
  type DecisionResult,
  decideEach,
  MAX_DECISIONS,
} from "../routes/decisions.js";
import { screenForm } from "../screen.js";
import { effectiveRoles, hashToken, type TokenStore } from "../tokens.js";
import { CSP, FAVICON_SVG, htmxScript, INBOX_CSS, INBOX_JS } from "./assets.js";
import { argsFromFields, editFieldsOf, type FieldSpec } from "./edit-form.js";
import { Layout } from "./layout.js";
import {
  BULK_VIEW_BUDGET,
  BulkConfirmPage,
  type BulkLine,
  BulkResultPage,
  type BulkView,
  bulkViewText,
} from "./pages/bulk.js";
import { DashboardPage } from "./pages/dashboard.js";
import { LoginPage } from "./pages/login.js";
import {
  arrange,
  type BulkShown,
  QueuePage,
  type QueueQuery,
  QueueRows,
  readQueueQuery,
} from "./pages/queue.js";
import {
  argsShownInFull,
  type Confirmation,
  type FormError,
  LiveParts,
  RequestPage,
  revisionCommentRequired,
  selectable,
  Trail,
} from "./pages/request.js";
import { LiveReport, readProgress } from "./progress.js";
import {
  createSessions,
  csrfMatches,
  SessionsFull,
  type SessionUser,
  sameSecret,
} from "./session.js";
import { mountTrustPages, suggestedRuleCount, TRUST_FORM_PATHS, TrustHint } from "./trust.js";

export interface InboxDeps extends InboxOptions {
  airlock: Airlock;
  tokens: TokenStore;
  logger: Logger;
  shutdown: AbortSignal;
  heartbeatMs: number;
  /** Largest form accepted, in bytes. */
  bodyLimitBytes: number;
  /** Learned trust: the /inbox/trust page (suggestions and rules). */
  trust?: LearnedTrust | undefined;
}

/** The inbox's settings a server passes through (`createServer({ inbox })`). */
export interface InboxOptions {
  /** The Secure flag on the inbox's cookies: `true` always (serve behind a TLS proxy), `false`
   * never, `"auto"` when the request came over https — or, with `trustProxy`, when the proxy says
   * so in `X-Forwarded-Proto`. @default "auto" */
  secureCookies?: boolean | "auto";
  /** Believe the `X-Forwarded-Proto` header (only behind a proxy that sets it). @default false */
  trustProxy?: boolean;
  /** Inbox sessions one token may hold at once (its oldest ends first). @default 20 */
  sessionsPerToken?: number;
  /** Inbox sessions in this process; past it sign-ins are refused. @default 10000 */
  maxSessions?: number;
  /** Successful sign-ins per token (a token bucket). @default { max: 20, windowMs: 60000 } */
  signInLimit?: RateLimitOptions;
  /** A reviewer's repeated views of one request within this long are audited once. @default 600000 */
  viewedWindowMs?: number;
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

/** What the request page says when the request changed since the reviewer's page showed it. */
const VIEW_CHANGED =
  "This request changed since your page showed it: your decision was not recorded. Look at it again, as it stands now, before deciding.";

/** Why the signed-in person may not decide a request, in the inbox's words (the rule is
 * core/authority.ts's). */
const INBOX_REFUSALS: Record<RefusalReason, (r: ApprovalRequest) => string> = {
  agent: () =>
    "You signed in with an agent's token, and no agent decides: sign in with your reviewer token.",
  no_deciding_role: () => "Your token may read this request but not decide it.",
  not_pending: (r) => `This request is ${r.status}.`,
  overdue: () => "This request passed its deadline and can no longer be decided.",
  requester: () => "You requested this yourself: somebody else has to decide it.",
  not_approver: (r) => `Only ${r.approvers.join(", ")} may decide this request.`,
  already_approved: () => "You approved already; the quorum needs other people.",
};

export function inboxRoutes(deps: InboxDeps): Hono {
  const { airlock, logger } = deps;
  const secureCookie = (c: Context): boolean => {
    const mode = deps.secureCookies ?? "auto";
    if (mode !== "auto") return mode;
    if (new URL(c.req.url).protocol === "https:") return true;
    if (!deps.trustProxy) return false;
    const proto = c.req.header("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
    return proto === "https";
  };
  const sessions = createSessions(deps.tokens, {
    ...(deps.sessionsPerToken === undefined ? {} : { perToken: deps.sessionsPerToken }),
    ...(deps.maxSessions === undefined ? {} : { max: deps.maxSessions }),
    secure: secureCookie,
  });
  const loginFailures = createRateLimiter({ max: 20, windowMs: 60_000 }, "inbox_login_failures");
  const signIns = createRateLimiter(
    deps.signInLimit ?? { max: 20, windowMs: 60_000 },
    "inbox_sign_ins",
  );
  const viewedWindowMs = deps.viewedWindowMs ?? 10 * 60_000;
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
  // A browser's form post must come from this site (hono's csrf: Origin or Sec-Fetch-Site), besides
  // carrying the form's CSRF token. Clients that send neither header (curl) rely on the token alone.
  // The host is compared, not the scheme: behind a TLS proxy this server sees http.
  const sameSite = csrf({
    origin: (origin, c) => {
      try {
        return new URL(origin).host === c.req.header("host");
      } catch {
        return false;
      }
    },
  });
  const originCheck: MiddlewareHandler = async (c, next) => {
    if (c.req.header("origin") === undefined && c.req.header("sec-fetch-site") === undefined) {
      return next();
    }
    let passed = false;
    try {
      await sameSite(c, async () => {
        passed = true;
      });
    } catch {
      // refused below
    }
    if (!passed) return csrfRefused(c);
    await next();
  };
  // Text no store can keep in a form field is refused like in a JSON body (screen.ts); the handlers
  // then read the form hono has kept.
  const formScreen: MiddlewareHandler = async (c, next) => {
    screenForm(await c.req.parseBody({ all: true }));
    await next();
  };
  for (const path of [
    "/login",
    "/logout",
    "/requests/:id/decide",
    "/requests/:id/execution",
    "/inbox/decisions",
    ...TRUST_FORM_PATHS,
  ]) {
    app.post(path, formLimit, originCheck, formScreen);
  }

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
      return handler(c, u);
    };
  }

  const position = async () => (await airlock.auditHead())?.seq ?? 0;
  const summaries = async (f: ListFilter): Promise<RequestSummary[]> =>
    (await airlock.listSummaries(f)).items;
  const count = (f: ListFilter): Promise<number> => airlock.count(f);
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
      secure: secureCookie(c),
      maxAge: 3600,
    });
    return page(c, "Sign in · Airlock", <LoginPage {...props} csrf={csrf} />, status);
  }
  // The API's description for a signed-in browser (the link `airlock serve` prints): the same
  // document the API serves to a bearer token, which a request without a session goes on to.
  app.get("/openapi.json", async (c, next) => {
    if (!(await sessions.current(c))) return next();
    return c.json(openApiDocument(), 200, { "cache-control": "no-store" });
  });
  app.get("/login", async (c) => {
    if (await sessions.current(c)) return c.redirect("/", 303);
    return loginPage(c, { next: safeNext(c.req.query("next")) });
  });
  app.post("/login", async (c) => {
    // The peer's own address: a client-chosen header (X-Forwarded-For) would let anyone spread
    // guesses over fresh "addresses", or lock everybody out by failing under the shared default.
    const env = c.env as { incoming?: IncomingMessage } | undefined;
    const address = env?.incoming?.socket?.remoteAddress ?? "local";
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
    const roles = record ? effectiveRoles(record) : [];
    if (!record || !(roles.includes("reviewer") || roles.includes("admin"))) {
      // Only failures are slowed, and only after the token was looked up: a valid token always signs
      // in, even from an address (a proxy's, shared by everyone behind it) that has failed many times.
      if (!(await loginFailures.peek(address)).ok) {
        return loginPage(c, { error: "Too many failed attempts; wait a minute.", next }, 429);
      }
      await loginFailures.take(address);
      const why = record
        ? "This token cannot sign in to the inbox: it needs the reviewer or admin role (an agent's token never does)."
        : "Unknown or revoked token.";
      return loginPage(c, { error: why, next }, 401);
    }
    if (!(await signIns.take(hash)).ok) {
      return loginPage(
        c,
        { error: "Too many sign-ins with this token; wait a minute.", next },
        429,
      );
    }
    try {
      sessions.start(c, hash);
    } catch (err) {
      if (!(err instanceof SessionsFull)) throw err;
      return loginPage(c, { error: "The inbox is full right now; try again later.", next }, 503);
    }
    deleteCookie(c, LOGIN_CSRF_COOKIE, { path: "/login" });
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

  // The queue and its live fragment. It reads summaries only (never the stored documents), the most
  // urgent first from the store (title search included), and the pending figure from a count that
  // stops at PENDING_SHOWN ("1000+"). It shows the first QUEUE_ROWS: a page of a backlog of any size
  // costs the same; search and filters find the others, and bulk review's "all matching this filter"
  // reaches BULK_ROWS.
  const QUEUE_ROWS = 100;
  const BULK_ROWS = 500;
  const PENDING_SHOWN = 1000;
  async function queue(c: Context, p: Principal) {
    const after = await position();
    const query = readQueueQuery((n) => c.req.query(n));
    const filter = scopeList(p, {
      ...(query.status === "all" ? {} : { status: query.status as Status }),
      ...(query.action ? { action: query.action } : {}),
      ...(query.q ? { q: query.q } : {}),
      order: query.sort === "urgent" ? "deadline" : "newest",
      limit: QUEUE_ROWS,
    });
    const pendingFilter = scopeList(p, { status: "pending" });
    const [page, pending] = await Promise.all([
      filter ? airlock.listSummaries(filter) : { items: [], nextCursor: undefined },
      pendingFilter ? airlock.count(pendingFilter, { upTo: PENDING_SHOWN }) : 0,
    ]);
    const visibleRows = page.items.filter((r) => canSee(p, r));
    const actions = [
      ...new Set(visibleRows.map((r) => r.action).concat(query.action ? [query.action] : [])),
    ].sort();
    const more = page.nextCursor !== undefined;
    const pendingLabel = pending >= PENDING_SHOWN ? `${PENDING_SHOWN}+` : String(pending);
    const rows = arrange(visibleRows, query);
    // What "all matching this filter" stands for: the rows shown when they are all the pending
    // matches, else read apart (at most BULK_ROWS).
    const bulk = shownOf(
      query.status === "pending" && !more
        ? { rows: rows.filter((r) => isPending(r) && !sameIdentity(r.requester, p.name)), more }
        : await bulkMatches(p, query),
    );
    return { query, rows, bulk, pendingLabel, actions, after, more };
  }
  app.get(
    "/",
    signedIn(async (c, u) => {
      const [q, suggested] = await Promise.all([
        queue(c, u.principal),
        suggestedRuleCount(deps.trust, u.principal, logger),
      ]);
      return page(
        c,
        `(${q.pendingLabel}) Airlock inbox`,
        <>
          <TrustHint count={suggested} />
          <QueuePage
            rows={q.rows}
            bulk={q.bulk}
            more={q.more}
            query={q.query}
            actions={q.actions}
            me={u.principal.name}
            csrf={u.session.csrf}
          />
        </>,
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
      return c.html(
        String(
          <QueueRows
            rows={q.rows}
            bulk={q.bulk}
            more={q.more}
            query={q.query}
            me={u.principal.name}
          />,
        ),
        200,
        {
          ...PAGE_HEADERS,
          "x-pending-count": q.pendingLabel,
        },
      );
    }, "fragment"),
  );

  // Bulk review: the ticked requests, or "all pending requests matching this filter" as the page
  // showed them: the form posts back the ids the page rendered for it and when (`shown_*`, see
  // BulkShown), so a request that arrived after the page was rendered is never decided by the post,
  // only listed as left pending. Each is decided on its own as by `POST /v1/decisions`; the answer
  // lists those decided, those someone else decided first, and those left pending.

  /** The pending requests "all matching this filter" covers for `p`: the queue's filter (action,
   * search, risk), not their own, the most urgent first, at most BULK_ROWS. */
  async function bulkMatches(
    p: Principal,
    query: QueueQuery,
  ): Promise<{ rows: RequestSummary[]; more: boolean }> {
    const filter = scopeList(p, {
      status: "pending",
      ...(query.action ? { action: query.action } : {}),
      ...(query.q ? { q: query.q } : {}),
      order: "deadline",
      limit: BULK_ROWS,
    });
    if (!filter) return { rows: [], more: false };
    const found = await airlock.listSummaries(filter);
    const rows = arrange(
      found.items.filter((r) => canSee(p, r) && !sameIdentity(r.requester, p.name)),
      { ...query, group: "" },
    );
    return { rows, more: found.nextCursor !== undefined };
  }
  /** The matches as the page shows them; `at` is read after them (and is never before one of
   * them was created, whatever the clocks of the processes that created them say). */
  function shownOf(m: { rows: RequestSummary[]; more: boolean }): BulkShown {
    let at = Date.now();
    for (const r of m.rows) at = Math.max(at, r.createdAt);
    return { ids: m.rows.map((r) => r.id), at, more: m.more };
  }
  /** What the posted form says the page showed for "all matching", or undefined when it does not
   * say it in full (a page rendered before this rule, or an altered form). */
  function readShown(form: FormValues): BulkShown | undefined {
    const one = (name: string) => (typeof form[name] === "string" ? form[name] : undefined);
    const at = one("shown_at") ?? "";
    const count = one("shown_count") ?? "";
    const ids = (one("shown_ids") ?? "").split(" ").filter(Boolean);
    if (!/^\d{1,15}$/.test(at) || !/^\d{1,4}$/.test(count) || Number(count) !== ids.length) {
      return undefined;
    }
    if (ids.length > BULK_ROWS || ids.some((id) => id.length > 200)) return undefined;
    if (new Set(ids).size !== ids.length) return undefined;
    return { ids, at: Number(at), more: false };
  }
  /** The fields a confirmation posts again, so the same rule picks the same requests. */
  const CARRIED = ["scope", "ids", "comment", "shown_at", "shown_count", "shown_ids"].concat(
    ["status", "action", "risk", "q"].map((n) => `filter_${n}`),
  );
  const SET_ASIDE = "set aside: you chose to approve the others only";

  /** The requests a bulk post decides, and those it does not (with why). */
  interface Picked {
    ids: string[];
    first: BulkLine[];
    failed: BulkLine[];
    left: BulkLine[];
    note?: string;
  }
  /** "All matching this filter": only what the page showed and is still pending. */
  async function pickShown(p: Principal, form: FormValues, shown: BulkShown): Promise<Picked> {
    const query = readQueueQuery((n) => {
      const v = form[`filter_${n}`];
      return typeof v === "string" ? v : undefined;
    });
    const skip = new Set(valuesOf(form, "skip"));
    const now = await bulkMatches(p, query);
    const current = new Map(now.rows.map((r) => [r.id, r]));
    const out: Picked = { ids: [], first: [], failed: [], left: [] };
    const titles = new Map<string, string>();
    for (const id of shown.ids) {
      // A shown request no longer among the matches was decided meanwhile, or is out of sight.
      const r = current.get(id) ?? (await visible(p, id));
      if (!r) {
        out.failed.push({ id, detail: "not found, or no longer yours to see" });
        continue;
      }
      titles.set(id, r.title);
      const line = { id, title: r.title, status: r.status };
      if (!isPending(r)) {
        const winner = "decisions" in r ? r.decision : undefined;
        out.first.push({ ...line, ...(winner ? { winner } : {}) });
      } else if (r.createdAt > shown.at) {
        out.left.push({ ...line, detail: "created after the page was shown: not decided" });
      } else if (skip.has(id)) {
        out.left.push({ ...line, detail: SET_ASIDE });
      } else {
        out.ids.push(id);
      }
    }
    const shownIds = new Set(shown.ids);
    let unseen = 0;
    for (const r of now.rows) {
      if (shownIds.has(r.id)) continue;
      unseen++;
      out.left.push({
        id: r.id,
        title: r.title,
        status: r.status,
        detail:
          r.createdAt > shown.at
            ? "new since the page was shown: not decided"
            : "not in the list the page showed: not decided",
      });
    }
    for (const id of out.ids.slice(MAX_DECISIONS)) {
      out.left.push({
        id,
        title: titles.get(id) ?? id,
        detail: `over ${MAX_DECISIONS} in one form: not decided; reload the inbox to decide it`,
      });
    }
    out.ids = out.ids.slice(0, MAX_DECISIONS);
    // The count no longer matches what was shown: say how, besides listing each one.
    const drift: string[] = [];
    if (out.first.length > 0) drift.push(`${out.first.length} decided elsewhere`);
    if (out.failed.length > 0) drift.push(`${out.failed.length} no longer yours to see`);
    if (unseen > 0) drift.push(`${unseen} you were not shown now match (left pending)`);
    if (drift.length > 0) {
      out.note = `The page showed ${shown.ids.length} pending requests matching this filter; since then: ${drift.join(", ")}. Only those shown and still pending were decided; the others are listed below.`;
    }
    return out;
  }
  /** The ticked requests (those the page rendered with a checkbox). */
  async function pickTicked(p: Principal, form: FormValues): Promise<Picked> {
    const skip = new Set(valuesOf(form, "skip"));
    const ticked = [
      ...new Set(valuesOf(form, "ids").filter((id) => id.length > 0 && id.length <= 200)),
    ];
    const out: Picked = { ids: [], first: [], failed: [], left: [] };
    for (const id of ticked) {
      if (!skip.has(id)) {
        out.ids.push(id);
        continue;
      }
      const r = await visible(p, id);
      out.left.push({ id, ...(r ? { title: r.title, status: r.status } : {}), detail: SET_ASIDE });
    }
    return out;
  }
  function bulkProblem(c: Context, u: SessionUser, message: string, status: number) {
    return page(
      c,
      "Bulk review · Airlock",
      <>
        <h1>Nothing decided</h1>
        <p class="error">{message}</p>
        <p>
          <a href="/">Back to the inbox</a>
        </p>
      </>,
      status,
      userProps(u),
    );
  }
  app.post(
    "/inbox/decisions",
    signedIn(async (c, u) => {
      const form = await c.req.parseBody({ all: true });
      if (!csrfMatches(u.session, form._csrf)) return csrfRefused(c);
      const verb = form.action === "approve" || form.action === "reject" ? form.action : undefined;
      if (!verb) return bulkProblem(c, u, "Choose Approve selected or Reject selected.", 422);
      const p = u.principal;
      let picked: Picked;
      if (form.scope === "filter") {
        const shown = readShown(form);
        if (!shown) {
          return bulkProblem(
            c,
            u,
            "This form does not say which requests the page showed (the page is older than the server, or the form was changed). Reload the inbox and choose again.",
            422,
          );
        }
        picked = await pickShown(p, form, shown);
      } else {
        picked = await pickTicked(p, form);
        if (picked.ids.length > MAX_DECISIONS) {
          return bulkProblem(
            c,
            u,
            `You selected ${picked.ids.length} requests; decide at most ${MAX_DECISIONS} at a time.`,
            413,
          );
        }
      }
      const { ids, note } = picked;
      if (ids.length + picked.first.length + picked.failed.length + picked.left.length === 0) {
        return bulkProblem(
          c,
          u,
          "Select at least one pending request (tick its box, or “all pending requests matching this filter”).",
          422,
        );
      }
      const comment = typeof form.comment === "string" ? form.comment.trim().slice(0, 2000) : "";
      // Approving in bulk shows what each request would run first (its review view, fitted to
      // BULK_VIEW_BUDGET), and asks; what is high risk or hard to undo, by its labels or by what
      // will run (core/danger.ts), is pointed out. The confirmation carries the digest of each
      // view it showed, and only a request whose digest came back is approved, bound to it.
      if (verb === "approve" && form.confirmed !== "yes") {
        const shown = await bulkViews(p, ids);
        const carry = CARRIED.flatMap((name) =>
          valuesOf(form, name).map((v): [string, string] => [name, v]),
        );
        return page(
          c,
          "Confirm · Airlock",
          <BulkConfirmPage
            csrf={u.session.csrf}
            carry={carry}
            count={shown.views.length}
            risky={shown.risky}
            views={shown.views}
            left={[...picked.left, ...shown.left]}
            {...(note ? { note } : {})}
            scope={
              form.scope === "filter"
                ? {
                    kind: "filter",
                    filter: filterWords(form),
                    shown: readShown(form)?.ids.length ?? 0,
                  }
                : { kind: "ticked" }
            }
          />,
          200,
          userProps(u),
        );
      }
      const outcome = verb === "approve" ? "approved" : "rejected";
      const items: (DecisionItem & { viewDigest?: string })[] = [];
      const unshown: BulkLine[] = [];
      for (const id of ids) {
        const item: DecisionItem & { viewDigest?: string } = {
          id,
          outcome,
          ...(comment ? { comment } : {}),
        };
        if (verb === "approve") {
          // Rejecting needs no view; approving, the one the confirmation showed.
          const digest = digestOf(form[`view_${id}`]);
          if (digest === undefined) {
            const r = await visible(p, id);
            // Settled meanwhile (so not on the confirmation): the engine says by whom.
            if (r && !isPending(r)) {
              items.push(item);
              continue;
            }
            unshown.push({
              id,
              ...(r ? { title: r.title, status: r.status } : {}),
              detail:
                r && !fitView(reviewViewOf(r), BULK_VIEW_BUDGET).fits
                  ? "too large to approve in bulk: open it to see all of it and decide there"
                  : "not shown on a confirmation page: not decided",
            });
            continue;
          }
          item.viewDigest = digest;
        }
        items.push(item);
      }
      // decideEach hands each item's fields to the engine as they are, the view digest with them.
      const results = await decideEach(airlock, p, items, {
        channel: "web",
        proof: "inbox_session",
        logger,
      });
      const lines = await bulkLines(p, results);
      return page(
        c,
        "Bulk review · Airlock",
        <BulkResultPage
          verb={verb}
          decided={lines.decided}
          first={[...picked.first, ...lines.first]}
          failed={[...picked.failed, ...lines.failed]}
          left={[...picked.left, ...unshown]}
          {...(note ? { note } : {})}
        />,
        200,
        userProps(u),
      );
    }, "form"),
  );
  /** What a bulk approval's confirmation shows of the pending requests among `ids`: each one's
   * view (with its digest) when it fits BULK_VIEW_BUDGET, else it is left out as too large to
   * approve in bulk; and those a single approval would confirm first, and why. */
  async function bulkViews(p: Principal, ids: string[]) {
    const risky: { id: string; title: string; reasons: string[] }[] = [];
    const views: BulkView[] = [];
    const left: BulkLine[] = [];
    for (const id of ids) {
      const r = await visible(p, id);
      if (!r || !isPending(r)) continue;
      const fitted = fitView(reviewViewOf(r), BULK_VIEW_BUDGET);
      if (!fitted.fits) {
        left.push({
          id,
          title: r.title,
          status: r.status,
          detail: "too large to approve in bulk: open it to see all of it and decide there",
        });
        continue;
      }
      views.push({ id, title: r.title, digest: viewDigestOf(r), text: bulkViewText(fitted) });
      const { reasons } = needsConfirmation(r);
      if (reasons.length > 0) risky.push({ id, title: r.title, reasons });
    }
    return { risky, views, left };
  }
  /** Sorts the results into decided, decided by someone else first, and not decided. A request
   * that is no longer pending after a refused decision was settled by someone else. */
  async function bulkLines(p: Principal, results: DecisionResult[]) {
    const decided: BulkLine[] = [];
    const first: BulkLine[] = [];
    const failed: BulkLine[] = [];
    for (const r of results) {
      if (r.ok) {
        decided.push({ id: r.id, title: r.request.title, status: r.request.status });
        continue;
      }
      const fresh = await visible(p, r.id);
      const base = { id: r.id, ...(fresh ? { title: fresh.title, status: fresh.status } : {}) };
      if (r.code === "conflict" && fresh && !isPending(fresh)) {
        const winner = fresh.decision ?? r.decision;
        first.push({ ...base, ...(winner ? { winner } : {}) });
      } else {
        const detail = r.detail.startsWith("view_changed:")
          ? "changed since the confirmation showed it: not decided; open it to look again"
          : r.detail;
        failed.push({ ...base, detail });
      }
    }
    return { decided, first, failed };
  }

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
  /** Whether the reviewer may decide `r`, by the state machine's rule (`canDecide`: pending, not
   * their own, among the approvers), and if not, why, in words. */
  /** Whether the signed-in caller may decide `r` now, and if not why, in the inbox's words: the rule
   * itself is core/authority.ts's. */
  function decidability(p: Principal, r: ApprovalRequest): { canDecide: boolean; whyNot?: string } {
    const refused = refusalOf(actorFor(p, "inbox_session", "web"), r, Date.now());
    if (!refused) return { canDecide: true };
    return { canDecide: false, whyNot: INBOX_REFUSALS[refused.reason](r) };
  }

  /** The JSON Schema the edit form is built from: the request's own, else the one registered for
   * its action. */
  function formSchemaOf(r: ApprovalRequest): Record<string, unknown> | undefined {
    if (r.argsSchema) return r.argsSchema;
    const registered = airlock.schemaFor(r.action);
    if (!registered) return undefined;
    try {
      return z.toJSONSchema(registered, { unrepresentable: "any" }) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  }
  /** The edit form's fields, or undefined for the JSON editor alone. */
  function editFieldsFor(r: ApprovalRequest): FieldSpec[] | undefined {
    if (!r.allowed.includes("edit")) return undefined;
    return editFieldsOf(r.args, formSchemaOf(r));
  }

  /** Which schema edited arguments are checked against, in a sentence. */
  function schemaNote(r: ApprovalRequest): string | undefined {
    if (!r.allowed.includes("edit")) return undefined;
    if (r.argsSchema) {
      return "Checked against the tool's own schema (carried with the request) when you approve.";
    }
    const schema = airlock.schemaFor(r.action);
    if (!schema) {
      return `No schema comes with this request, nor is one registered for ${r.action}: each field keeps the type the agent sent (edit as JSON to change more).`;
    }
    return `Checked against the schema registered for ${r.action}${describeSchema(schema)}.`;
  }

  /** The request this one was revised into, if the reviewer may see it (among the requester's
   * recent requests). */
  async function successorOf(
    p: Principal,
    r: ApprovalRequest,
  ): Promise<ApprovalRequest | undefined> {
    if (r.status !== "revise") return undefined; // only a revision has a successor
    const recent = await summaries({ requester: r.requester, order: "newest", limit: 200 });
    const next = recent.find((s) => s.revisionOf === r.id);
    return next ? visible(p, next.id) : undefined;
  }

  interface Extra {
    error?: FormError;
    notice?: string;
    confirm?: Confirmation;
  }
  const progressFor = (r: ApprovalRequest) => readProgress(airlock, r.id);
  async function panelProps(u: SessionUser, r: ApprovalRequest, extra: Extra = {}) {
    const [successor, previous, progress] = await Promise.all([
      successorOf(u.principal, r),
      r.revisionOf ? visible(u.principal, r.revisionOf) : undefined,
      progressFor(r),
    ]);
    return {
      request: r,
      csrf: u.session.csrf,
      ...decidability(u.principal, r),
      error: extra.error,
      notice: extra.notice,
      confirm: extra.confirm,
      schemaNote: schemaNote(r),
      editFields: editFieldsFor(r),
      responseFields: r.allowed.includes("respond") ? responseFieldsOf(r) : undefined,
      progress,
      successor,
      previous,
    };
  }
  async function renderRequest(
    c: Context,
    u: SessionUser,
    r: ApprovalRequest,
    status = 200,
    extra: Extra & { after?: number; trail?: AuditEvent[] } = {},
  ) {
    const after = extra.after ?? (await position());
    const [trail, revisions, props] = await Promise.all([
      extra.trail ?? airlock.audit({ requestId: r.id, limit: 500 }),
      revisionChain(u.principal, r),
      panelProps(u, r, extra),
    ]);
    return page(
      c,
      `${r.title} · Airlock`,
      <RequestPage {...props} trail={trail} revisions={revisions} />,
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
      const trail = await airlock.audit({ requestId: r.id, limit: 500 });
      // A page view is audited once per reviewer and request within `viewedWindowMs`, so reloads
      // and revisits do not fill the trail.
      if (isPending(r)) {
        const since = Date.now() - viewedWindowMs;
        const seen = trail.some(
          (e) => e.type === "viewed" && e.at >= since && sameIdentity(e.actor, u.principal.name),
        );
        if (!seen) {
          trail.push(
            await airlock.record({
              type: "viewed",
              requestId: r.id,
              actor: u.principal.name,
              data: { channel: "web" },
            }),
          );
        }
      }
      return renderRequest(c, u, r, 200, { after, trail });
    }),
  );
  app.get(
    "/inbox/requests/:id/panel",
    signedIn(async (c, u) => {
      const r = await visible(u.principal, c.req.param("id") ?? "");
      if (!r) return c.text("not found", 404, PAGE_HEADERS);
      return c.html(String(<LiveParts {...(await panelProps(u, r))} />), 200, PAGE_HEADERS);
    }, "fragment"),
  );

  app.get(
    "/inbox/requests/:id/report",
    signedIn(async (c, u) => {
      const r = await visible(u.principal, c.req.param("id") ?? "");
      if (!r) return c.text("not found", 404, PAGE_HEADERS);
      return c.html(
        String(<LiveReport requestId={r.id} doc={await progressFor(r)} />),
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
      // The digest of the view the page showed (every decision form carries it): a request that
      // changed since is shown again rather than decided, or confirmed, on what it no longer asks.
      const shown = digestOf(form.viewDigest);
      if (shown !== undefined && shown !== viewDigestOf(r) && isPending(r)) {
        return renderRequest(c, u, r, 409, { notice: VIEW_CHANGED });
      }
      const built = decisionFromForm(form, r, editFieldsFor(r));
      if ("error" in built) return renderRequest(c, u, r, 422, { error: built.error });
      if ("confirm" in built) return renderRequest(c, u, r, 200, { confirm: built.confirm });
      if ("decision" in built) {
        if (shown !== undefined) built.decision.viewDigest = shown;
        // What runs must be on the page in full to be approved here (the page offers no approval
        // of arguments it cannot show whole; a crafted post gets none either).
        if (built.decision.outcome === "approved" && !argsShownInFull(r)) {
          return renderRequest(c, u, r, 422, {
            error: {
              form: built.form,
              message:
                "The exact arguments are too large to show in the inbox in full, so this request cannot be approved here.",
            },
          });
        }
      }
      try {
        if ("cancel" in built) {
          const who = decidability(u.principal, r);
          // A request no longer pending goes to the engine, which names who settled it (409).
          if (!who.canDecide && isPending(r)) {
            return renderRequest(c, u, r, 403, {
              error: { form: "cancel", message: who.whyNot ?? "You may not cancel this request." },
            });
          }
          // A reviewer cancels as a reviewer (the engine checks they may decide it); an admin as admin.
          await airlock.cancel(r.id, {
            by: u.principal.name,
            reason: built.cancel,
            channel: "web",
            ...(hasRole(u.principal, "admin")
              ? {}
              : { asReviewer: { groups: [...u.principal.groups] } }),
          });
        } else {
          await airlock.decideAs(
            actorFor(u.principal, "inbox_session", "web"),
            r.id,
            built.decision,
          );
        }
      } catch (err) {
        if (!isAirlockError(err)) throw err;
        const fresh = (await visible(u.principal, r.id)) ?? r;
        if (isViewChanged(err) && isPending(fresh)) {
          return renderRequest(c, u, fresh, 409, { notice: VIEW_CHANGED });
        }
        if (err.code === "conflict" && !isPending(fresh)) {
          const d = fresh.decision;
          const notice = d
            ? `${d.reviewer} decided this request first (${fresh.status}); your decision was not recorded.`
            : "This request was decided elsewhere first; your decision was not recorded.";
          return renderRequest(c, u, fresh, 409, { notice });
        }
        const status = err.code === "forbidden" ? 403 : err.code === "invalid_input" ? 422 : 409;
        const formName: FormError["form"] = "cancel" in built ? "cancel" : built.form;
        const error: FormError = { form: formName, message: err.message };
        if (!("cancel" in built) && built.form === "respond") {
          if (built.posted) {
            error.posted = built.posted;
            const field = fieldOf(err, "response.");
            if (field !== undefined) error.field = field;
          } else {
            error.argsText = built.argsText ?? "";
          }
        }
        if (!("cancel" in built) && built.form === "edit") {
          if (built.posted) {
            // The fields as typed, and the message beside the argument it is about.
            error.posted = built.posted;
            const field = fieldOf(err);
            if (field !== undefined) error.field = field;
          } else {
            error.argsText = built.argsText ?? "";
          }
        }
        if ("cancel" in built) error.comment = built.cancel;
        else if (typeof form.comment === "string") error.comment = form.comment;
        error.selected = ticked(form);
        return renderRequest(c, u, fresh, status, { error });
      }
      return c.redirect(`/requests/${r.id}`, 303);
    }, "form"),
  );

  // A person settles an approved action not known to have run (or that failed): the engine asks
  // authority who may, inside its compare-and-set.
  app.post(
    "/requests/:id/execution",
    signedIn(async (c, u) => {
      const form = await c.req.parseBody();
      if (!csrfMatches(u.session, form._csrf)) return csrfRefused(c);
      const r = await visible(u.principal, c.req.param("id") ?? "");
      if (!r) return notFound(c, u);
      const resolution = form.resolution;
      if (resolution !== "retry" && resolution !== "done" && resolution !== "abandon") {
        return renderRequest(c, u, r, 422, { notice: "Choose retry, done or abandon." });
      }
      const comment =
        typeof form.comment === "string" && form.comment.trim() ? form.comment.trim() : undefined;
      try {
        await airlock.resolveExecution(actorFor(u.principal, "inbox_session", "web"), r.id, {
          resolution,
          ...(comment === undefined ? {} : { comment }),
        });
      } catch (err) {
        if (!isAirlockError(err)) throw err;
        const status = err.code === "forbidden" ? 403 : err.code === "invalid_input" ? 422 : 409;
        const fresh = (await visible(u.principal, r.id)) ?? r;
        return renderRequest(c, u, fresh, status, { notice: err.message });
      }
      return c.redirect(`/requests/${r.id}`, 303);
    }, "form"),
  );

  // Review metrics over the requests this reviewer may see (all of them for an admin).
  const TERMINAL: Status[] = statusSchema.options.filter(isTerminal);
  const DASHBOARD_PAGES = 20;
  async function visibleMetrics(p: Principal, sinceMs: number) {
    if (hasRole(p, "admin")) return airlock.metrics({ sinceMs });
    const since = Date.now() - sinceMs;
    const decided = scopeList(p, { status: TERMINAL, order: "newest", limit: 500 });
    const pendingFilter = scopeList(p, { status: "pending" });
    const rows: OutcomeRow[] = [];
    let cursor: string | undefined;
    for (let i = 0; decided && i < DASHBOARD_PAGES; i++) {
      const pageOf = await airlock.listSummaries({
        ...decided,
        ...(cursor ? { cursor } : {}),
      });
      for (const s of pageOf.items) {
        if (!canSee(p, s) || !s.decision || s.decision.decidedAt < since) continue;
        rows.push({
          action: s.action,
          status: s.status,
          method: s.decision.method,
          createdAt: s.createdAt,
          decidedAt: s.decision.decidedAt,
        });
      }
      cursor = pageOf.nextCursor;
      if (!cursor) break;
    }
    return computeMetrics(rows, pendingFilter ? await count(pendingFilter) : 0);
  }
  app.get(
    "/dashboard",
    signedIn(async (c, u) => {
      const window = c.req.query("window") === "week" ? "week" : "day";
      const metrics = await visibleMetrics(
        u.principal,
        (window === "day" ? 1 : 7) * 24 * 3600 * 1000,
      );
      return page(
        c,
        "Metrics · Airlock",
        <DashboardPage metrics={metrics} window={window} />,
        200,
        userProps(u),
      );
    }),
  );

  // Live updates for the pages: which visible request changed, nothing more. A stream ends with its
  // session: at sign-out, at expiry, and once the token behind it is revoked (checked at every
  // event and every heartbeat).
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
        u.session.ended.signal.addEventListener("abort", abort, { once: true });
        const stillSignedIn = async () => {
          if (await sessions.check(u.session)) return true;
          abort();
          return false;
        };
        const heartbeat = setInterval(() => {
          void stillSignedIn().then((ok) => {
            if (ok) void stream.write(": keep-alive\n\n");
          });
        }, deps.heartbeatMs);
        try {
          if (!(await stillSignedIn())) return;
          await stream.writeSSE({ event: "ready", data: "{}", retry: 2000 });
          for await (const e of airlock.events({
            after: start,
            signal: stop.signal,
            types: [...TYPES],
          })) {
            if (stream.aborted || stream.closed || stop.signal.aborted) break;
            if (!(await stillSignedIn())) break;
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
          u.session.ended.signal.removeEventListener("abort", abort);
        }
      });
    }, "fragment"),
  );

  mountTrustPages(app, {
    trust: deps.trust,
    logger,
    render: (c, u, title, body, status) => page(c, title, body, status, userProps(u)),
    signedIn,
    csrfRefused,
  });

  return app;
}

/** The queue filter a bulk form carries, in words ("action bulk.notify, search “weekly”"). */
function filterWords(form: FormValues): string {
  const one = (name: string) => {
    const v = form[`filter_${name}`];
    return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
  };
  const parts = [
    one("action") ? `action ${one("action")}` : "",
    one("risk") ? `risk ${one("risk")}` : "",
    one("q") ? `search “${one("q")}”` : "",
  ].filter(Boolean);
  return parts.length ? parts.join(", ") : "every action (no filter)";
}

/** The argument an engine refusal names (`editedArgs.amount` → `amount`). */
function fieldOf(err: unknown, prefix = "editedArgs."): string | undefined {
  const field = (err as { field?: unknown }).field;
  if (typeof field !== "string" || !field.startsWith(prefix)) return undefined;
  return field.slice(prefix.length).split(".")[0];
}

/** The answer form's fields: those of an object `responseSchema` (edit-form.tsx). */
function responseFieldsOf(r: ApprovalRequest): FieldSpec[] | undefined {
  const schema = r.responseSchema;
  if (!schema || typeof schema.properties !== "object" || schema.properties === null) {
    return undefined;
  }
  return editFieldsOf({}, schema);
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

/** The top-level fields of a schema, in a few words (", fields: to (string), …"). */
function describeSchema(schema: ZodType): string {
  try {
    const json = z.toJSONSchema(schema, { unrepresentable: "any" }) as {
      properties?: Record<string, { type?: unknown; format?: unknown }>;
      required?: string[];
      additionalProperties?: unknown;
    };
    const props = Object.entries(json.properties ?? {}).slice(0, 20);
    if (!props.length) return "";
    const required = new Set(json.required ?? []);
    const fields = props.map(([name, p]) => {
      const kind = [
        typeof p.type === "string" ? p.type : "",
        typeof p.format === "string" ? p.format : "",
      ]
        .filter(Boolean)
        .join(", ");
      return `${name}${kind ? ` (${kind}${required.has(name) ? "" : ", optional"})` : required.has(name) ? "" : " (optional)"}`;
    });
    const closed = json.additionalProperties === false ? "; no other fields" : "";
    return `: ${fields.join(", ")}${closed}`;
  } catch {
    return "";
  }
}

type FormValues = Record<string, string | File | (string | File)[]>;

/** Every string value of a form field (one or many). */
function valuesOf(form: FormValues, name: string): string[] {
  const raw = form[name];
  return (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter(
    (v): v is string => typeof v === "string",
  );
}

function ticked(form: FormValues): string[] {
  const raw = form.items;
  return (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter(
    (v): v is string => typeof v === "string",
  );
}

type Built =
  | {
      decision: Omit<DecisionInput, "reviewer" | "groups" | "channel">;
      form: FormError["form"];
      argsText?: string;
      posted?: Record<string, string | undefined>;
    }
  | { cancel: string }
  | { confirm: Confirmation }
  | { error: FormError };

function decisionFromForm(
  form: FormValues,
  r: ApprovalRequest,
  fields: FieldSpec[] | undefined,
): Built {
  const str = (v: unknown) => (typeof v === "string" ? v : undefined);
  const action = str(form.action);
  const comment = str(form.comment)?.trim();
  const withComment = comment ? { comment } : {};
  const items = selectable(r) ? ticked(form).filter((id) => r.items.some((i) => i.id === id)) : [];
  const confirmed = str(form.confirmed) === "yes";
  const noun = presentationOf(r).labels.itemNoun ?? "items";
  const ask = (message: string, choices: Confirmation["choices"]): Built => ({
    confirm: { message, choices, comment: comment ?? "", selected: items },
  });
  // The rule is core/danger.ts's: the agent's labels, and what will run (args, preview, items).
  const asking = (reasons: string[]) => `This asks to confirm first: ${reasons.join("; ")}.`;
  const reasons = needsConfirmation(r).reasons;
  const risky = reasons.length > 0;
  const danger = asking(reasons);
  switch (action) {
    case "approve":
      // "Approve all" with some items ticked: never drop the selection silently; ask which.
      if (items.length > 0 && items.length < r.items.length && !confirmed) {
        return ask(
          `You ticked ${items.length} of ${r.items.length} ${noun}. Approve only the ticked ones, or all ${r.items.length}?${risky ? ` ${danger}` : ""}`,
          [
            { action: "approve_selected", label: `Approve the ${items.length} ticked` },
            { action: "approve", label: `Approve all ${r.items.length}` },
          ],
        );
      }
      if (risky && !confirmed) {
        return ask(`${danger} Approve “${r.title}”?`, [
          { action: "approve", label: "Yes, approve" },
        ]);
      }
      return { decision: { outcome: "approved", ...withComment }, form: "decide" };
    case "approve_selected": {
      if (items.length === 0) {
        return {
          error: {
            form: "decide",
            message: "Select at least one item to approve, or reject the request.",
            comment: comment ?? "",
          },
        };
      }
      if (risky && !confirmed) {
        return ask(`${danger} Approve the ${items.length} ticked ${noun}?`, [
          { action: "approve_selected", label: `Yes, approve the ${items.length} ticked` },
        ]);
      }
      return { decision: { outcome: "approved", selected: items, ...withComment }, form: "decide" };
    }
    case "reject":
      return { decision: { outcome: "rejected", ...withComment }, form: "decide" };
    case "cancel": {
      const reason = str(form.reason)?.trim() ?? "";
      if (!reason) {
        return { error: { form: "cancel", message: "Say why you cancel this request." } };
      }
      return { cancel: reason.slice(0, 2000) };
    }
    case "respond": {
      // The answer the waiting agent gets: fields of an object responseSchema, JSON, or text.
      const mode = str(form.response_mode);
      let response: unknown;
      if (mode === "fields") {
        const fieldsOfResponse = responseFieldsOf(r);
        if (!fieldsOfResponse) {
          return { error: { form: "respond", message: "This request takes no answer fields." } };
        }
        const read = argsFromFields(fieldsOfResponse, {}, (name) => str(form[name]));
        if ("field" in read) {
          return {
            error: {
              form: "respond",
              message: read.message,
              field: read.field,
              posted: read.posted,
            },
          };
        }
        return {
          decision: { outcome: "responded", response: read.args, ...withComment },
          form: "respond",
          posted: read.posted,
        };
      }
      const text = (str(form.response) ?? "").replace(/\r\n/g, "\n");
      if (text.trim() === "") {
        return { error: { form: "respond", message: "Write an answer first.", argsText: text } };
      }
      if (mode === "json") {
        try {
          response = JSON.parse(text);
        } catch (err) {
          return {
            error: {
              form: "respond",
              message: `Not valid JSON: ${(err as Error).message}`,
              argsText: text,
            },
          };
        }
      } else {
        response = text;
      }
      return {
        decision: { outcome: "responded", response, ...withComment },
        form: "respond",
        argsText: text,
      };
    }
    case "revise":
      if (!comment && revisionCommentRequired(r)) {
        return {
          error: {
            form: "revise",
            message: "Say what should change: this request needs a comment.",
          },
        };
      }
      return { decision: { outcome: "revise", comment: comment ?? "" }, form: "revise" };
    case "edit": {
      let text = str(form.args) ?? "";
      let parsed: unknown;
      let posted: Record<string, string | undefined> | undefined;
      if (str(form.edit_mode) === "fields" && fields) {
        // The fields of the form, read with this request's own specs (edit-form.tsx).
        const read = argsFromFields(fields, r.args, (name) => str(form[name]));
        if ("field" in read) {
          return {
            error: { form: "edit", message: read.message, field: read.field, posted: read.posted },
          };
        }
        parsed = read.args;
        posted = read.posted;
        text = JSON.stringify(read.args, null, 2);
      } else {
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
      // What will run is the edited arguments: they are read, not those the agent sent.
      const edited = needsConfirmation({ ...r, args: parsed as Record<string, unknown> }).reasons;
      const why = [...new Set([...reasons.filter((x) => !x.startsWith("args")), ...edited])];
      if (why.length > 0 && !confirmed) {
        return {
          confirm: {
            message: `${asking(why)} Approve “${r.title}” with the arguments you edited?`,
            choices: [{ action: "edit", label: "Yes, approve with these arguments" }],
            comment: comment ?? "",
            selected: [],
            args: text,
            ...(posted ? { fields: posted } : {}),
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
        ...(posted ? { posted } : {}),
      };
    }
    default:
      return {
        error: {
          form: "decide",
          message: "Choose approve, approve selected, reject, revise, edit, respond or cancel.",
        },
      };
  }
}
