// The inbox's learned trust page (/inbox/trust) and its two forms: accept a suggested rule, revoke a
// rule. Both are for admins, carry the session's CSRF token and come from this site (the caller
// mounts them behind its form size limit and origin check).
import type { Context, Hono } from "hono";
import type { FC } from "hono/jsx";
import type { Logger } from "pino";
import { ConflictError, isAirlockError } from "../../core/errors.js";
import type { LearnedTrust } from "../../policy/learned-trust.js";
import { hasRole, type Principal } from "../env.js";
import { TrustPage, type TrustPageProps } from "./pages/trust.js";
import { csrfMatches, type SessionUser } from "./session.js";

export const TRUST_FORM_PATHS = ["/inbox/trust/accept", "/inbox/trust/revoke"] as const;

type Handler = (c: Context, u: SessionUser) => Promise<Response>;

export interface TrustPagesDeps {
  trust: LearnedTrust | undefined;
  logger: Logger;
  /** The inbox's page renderer (layout, headers), its signed-in guard, and its CSRF refusal. */
  render(c: Context, u: SessionUser, title: string, body: unknown, status?: number): Response;
  signedIn(handler: Handler, kind?: "page" | "form"): (c: Context) => Promise<Response>;
  csrfRefused(c: Context): Response;
}

export function mountTrustPages(app: Hono, d: TrustPagesDeps): void {
  async function show(
    c: Context,
    u: SessionUser,
    extra: Pick<TrustPageProps, "notice" | "error"> = {},
    status = 200,
  ) {
    const isAdmin = hasRole(u.principal, "admin");
    const [suggestions, rules] = await Promise.all([
      isAdmin && d.trust ? d.trust.suggestions() : [],
      d.trust ? d.trust.rules() : [],
    ]);
    const props: TrustPageProps = {
      isAdmin,
      csrf: u.session.csrf,
      threshold: d.trust?.threshold ?? 0,
      suggestions,
      rules,
      ...extra,
    };
    return d.render(c, u, "Learned trust · Airlock", <TrustPage {...props} />, status);
  }

  app.get(
    "/inbox/trust",
    d.signedIn(async (c, u) => {
      const accepted = c.req.query("accepted");
      const revoked = c.req.query("revoked");
      const notice = accepted
        ? `Rule ${accepted} accepted: matching calls are now approved without asking.`
        : revoked
          ? `Rule ${revoked} revoked: its calls go to people again.`
          : undefined;
      return show(c, u, { notice });
    }),
  );

  /** Runs an admin's form: CSRF first, then the role, then `act`; a refusal shows the page. */
  function adminForm(act: (form: Record<string, unknown>, u: SessionUser) => Promise<string>) {
    return d.signedIn(async (c, u) => {
      // `all`: the widening boxes share one name (anyValue), one entry per ticked box.
      const form = await c.req.parseBody({ all: true });
      if (!csrfMatches(u.session, form._csrf)) return d.csrfRefused(c);
      if (!hasRole(u.principal, "admin")) {
        return show(c, u, { error: "Only admins accept or revoke learned trust rules." }, 403);
      }
      try {
        return c.redirect(await act(form, u), 303);
      } catch (err) {
        if (!isAirlockError(err)) throw err;
        const status = err.code === "not_found" ? 404 : err.code === "conflict" ? 409 : 422;
        return show(c, u, { error: err.message }, status);
      }
    }, "form");
  }
  const text = (v: unknown) => (typeof v === "string" ? v : "");

  app.post(
    "/inbox/trust/accept",
    adminForm(async (form, u) => {
      if (!d.trust) throw notEnabled();
      const anyValue = [form.anyValue ?? []].flat().filter((v) => typeof v === "string");
      const widen = {
        ...(text(form.anyRequester) === "true" ? { anyRequester: true } : {}),
        ...(anyValue.length > 0 ? { anyValue } : {}),
      };
      const rule = await d.trust.accept(
        { action: text(form.action), shapeHash: text(form.shapeHash), widen },
        u.principal.name,
      );
      d.logger.info(
        { rule_id: rule.id, action: rule.action, by: u.principal.name, widened: widen },
        "learned trust rule accepted in the inbox",
      );
      return `/inbox/trust?accepted=${encodeURIComponent(rule.id)}`;
    }),
  );
  app.post(
    "/inbox/trust/revoke",
    adminForm(async (form, u) => {
      if (!d.trust) throw notEnabled();
      const rule = await d.trust.revoke(text(form.id), u.principal.name);
      d.logger.info(
        { rule_id: rule.id, action: rule.action, by: u.principal.name },
        "learned trust rule revoked in the inbox",
      );
      return `/inbox/trust?revoked=${encodeURIComponent(rule.id)}`;
    }),
  );
}

function notEnabled() {
  return new ConflictError("learned trust is not enabled on this server");
}

/** How many rules are suggested, for an admin's queue page (0 for others): the scan is reused for
 * up to `HINT_MAX_AGE_MS`, and a failure to compute it never fails the page. */
export async function suggestedRuleCount(
  trust: LearnedTrust | undefined,
  p: Principal,
  logger: Logger,
): Promise<number> {
  if (!trust || !hasRole(p, "admin")) return 0;
  try {
    return (await trust.suggestions({ maxAgeMs: HINT_MAX_AGE_MS })).length;
  } catch (err) {
    logger.warn({ err }, "learned trust suggestions could not be computed");
    return 0;
  }
}
const HINT_MAX_AGE_MS = 30_000;

/** The queue's hint that rules are suggested. */
export const TrustHint: FC<{ count: number }> = ({ count }) =>
  count > 0 ? (
    <p class="notice" id="trust-hint">
      {count === 1
        ? "1 suggested rule: a call people keep approving could be approved without asking."
        : `${count} suggested rules: calls people keep approving could be approved without asking.`}{" "}
      <a href="/inbox/trust">Review suggested rules</a>
    </p>
  ) : null;
