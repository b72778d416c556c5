// The pages behind a mail's one-click links. Mail scanners open links before people do, so GET only
// shows what the click would decide and a form; the POST of that form decides. The token is the
// credential: its signature, its expiry, and its recipient (who must be a configured person) are
// checked on every request, and the state machine checks the rest (approvers, quorum, the requester).
// The mail's nonce is the decision's idempotency key, so a mail's links decide once.

import type { Context } from "hono";
import { redactorOf } from "../../audit/redact.js";
import { actorOf } from "../../core/authority.js";
import { isAirlockError } from "../../core/errors.js";
import { sameIdentity } from "../../core/identity.js";
import type { ApprovalRequest, Decision } from "../../core/schemas.js";
import { canDecide } from "../../core/state.js";
import { outsideView } from "../outside.js";
import type { InboundDeps } from "../types.js";
import {
  type FittedView,
  isViewChanged,
  MAIL_VIEW_BUDGET,
  notShown,
  outsideFit,
} from "../view-fit.js";
import { inboxUrl, iso } from "./compose.js";
import type { EmailContext } from "./context.js";
import { escapeHtml, link, PAGE_HEADERS, page, paragraph, preformatted } from "./html.js";
import { type LinkClaims, verifyLink } from "./tokens.js";
import { mailBody } from "./view-mail.js";

const MAX_COMMENT_CHARS = 2000;

const FAILURE_PAGES = {
  malformed: [
    400,
    "Link not valid",
    "This link is damaged or incomplete. Open the request in the inbox instead.",
  ],
  forged: [
    403,
    "Link not valid",
    "This link's signature does not match: it was not issued by this server, or it was changed.",
  ],
  expired: [
    410,
    "Link expired",
    "This link has expired. Open the request in the inbox, or reply to the mail.",
  ],
} as const;

function html(c: Context, status: number, title: string, body: string): Response {
  return c.html(page(title, body), status as 200, PAGE_HEADERS);
}

function actionLabel(claims: LinkClaims, request: ApprovalRequest): string {
  if (claims.o === "approved") {
    return request.items.length > 0 ? `approve all ${request.items.length} items` : "approve";
  }
  return claims.m === "skip" ? "skip (approve none of the items)" : "reject";
}

function decidedText(d: Decision | undefined, status: string): string {
  if (!d) return `This request is already ${status}.`;
  if (d.method === "timeout") return `This request already timed out at ${iso(d.decidedAt)}.`;
  return `This request was already decided by ${d.reviewer} (${d.channel}) at ${iso(d.decidedAt)}: ${d.outcome}.`;
}

/** Why a link may not approve, or undefined: a view the mail could not show in full, or a link
 * signed before links carried the view their mail showed. Rejecting needs neither. */
function blindLink(claims: LinkClaims, fitted: FittedView, requestId: string): string | undefined {
  if (claims.o !== "approved") return undefined;
  if (!fitted.fits) {
    return `This request is too large to show in a mail in full (${notShown(fitted.omitted)}), so it cannot be approved from a mail link. Open it in the inbox to see all of it and decide there.`;
  }
  if (claims.v === undefined) {
    return `This link was sent before mails showed a request's exact arguments, so it cannot approve ${requestId}. Open it in the inbox to see what it would run and decide there.`;
  }
  return undefined;
}

export function linkHandlers(email: EmailContext, deps: InboundDeps) {
  async function load(c: Context, id: string): Promise<ApprovalRequest | Response> {
    try {
      return await deps.airlock.get(id);
    } catch (err) {
      if (isAirlockError(err, "not_found")) {
        return html(c, 404, "Request not found", paragraph("This request no longer exists."));
      }
      throw err;
    }
  }

  async function refuse(reason: string, claims?: LinkClaims): Promise<void> {
    email.logger.warn({ reason, requestId: claims?.r }, "email link refused");
    await deps.refuse({
      channel: "email",
      target: email.name,
      reason,
      ...(claims ? { requestId: claims.r, actor: claims.to } : {}),
    });
  }

  async function show(c: Context): Promise<Response> {
    const token = c.req.param("token") ?? "";
    const check = verifyLink(email.options.linkSecret, token, deps.now());
    if (!check.ok) {
      const [status, title, text] = FAILURE_PAGES[check.reason];
      return html(c, status, title, paragraph(text));
    }
    const { claims } = check;
    const request = await load(c, claims.r);
    if (request instanceof Response) return request;
    const inbox = `<p>${link(inboxUrl(deps.publicUrl, request.id), "Open it in the inbox")}</p>`;
    if (request.status !== "pending") {
      return html(
        c,
        200,
        "Already decided",
        paragraph(decidedText(request.decision, request.status)) + inbox,
      );
    }
    const reviewer = email.identities.byEmail(claims.to);
    if (!reviewer) {
      return html(c, 403, "Not allowed", paragraph(`${claims.to} is not a configured reviewer.`));
    }
    // Told now rather than after the click; the POST is checked by the state machine all the same.
    if (!canDecide(request, reviewer.name, reviewer.groups)) {
      return html(
        c,
        403,
        "Not allowed",
        paragraph(
          `${reviewer.name} may not decide this request (only its approvers may, and never its requester).`,
        ) + inbox,
      );
    }
    const what = actionLabel(claims, request);
    // What the mail showed (its view, redacted as the mail was) is shown again; an approval of a
    // view the mail could not show in full, or from a link that carries no view, is not offered.
    const fitted = outsideFit(request, redactorOf(deps.airlock), MAIL_VIEW_BUDGET);
    const body = preformatted(
      mailBody(outsideView(request, redactorOf(deps.airlock)), fitted, {
        now: deps.now(),
        inbox: inboxUrl(deps.publicUrl, request.id),
      }),
    );
    const blind = blindLink(claims, fitted, request.id);
    if (blind) return html(c, 403, "Not from a mail link", paragraph(blind) + body + inbox);
    const comment =
      claims.o === "rejected"
        ? `<p><label for="comment">Reason (optional)</label><br><textarea id="comment" name="comment" maxlength="${MAX_COMMENT_CHARS}"></textarea></p>`
        : "";
    const form = `<form method="post">
<input type="hidden" name="token" value="${escapeHtml(token)}">
${comment}<p><button type="submit">Confirm: ${escapeHtml(what)}</button></p>
</form>`;
    return html(
      c,
      200,
      `Confirm: ${what}`,
      paragraph(
        `You are about to ${what} as ${reviewer.name}. Nothing is decided until you confirm.`,
      ) +
        body +
        form +
        inbox,
    );
  }

  async function decide(c: Context): Promise<Response> {
    const token = c.req.param("token") ?? "";
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const bodyToken = form.token;
    if (bodyToken !== undefined && bodyToken !== token) {
      return html(c, 400, "Link not valid", paragraph("The form does not belong to this link."));
    }
    const rawComment = typeof form.comment === "string" ? form.comment.trim() : "";
    if (rawComment.length > MAX_COMMENT_CHARS) {
      return html(
        c,
        400,
        "Reason too long",
        paragraph(`Keep the reason under ${MAX_COMMENT_CHARS} characters.`),
      );
    }
    const check = verifyLink(email.options.linkSecret, token, deps.now());
    if (!check.ok) {
      // A forged token's claims are not to be believed, so they are not recorded.
      await refuse(
        `email link ${check.reason}`,
        check.reason === "expired" ? check.claims : undefined,
      );
      const [status, title, text] = FAILURE_PAGES[check.reason];
      return html(c, status, title, paragraph(text));
    }
    const { claims } = check;
    const reviewer = email.identities.byEmail(claims.to);
    if (!reviewer) {
      await refuse(`email link for ${claims.to}, who is not a configured reviewer`, claims);
      return html(c, 403, "Not allowed", paragraph(`${claims.to} is not a configured reviewer.`));
    }
    const key = `email-link:${claims.n}`;
    const before = await load(c, claims.r);
    if (before instanceof Response) return before;
    const inbox = `<p>${link(inboxUrl(deps.publicUrl, claims.r), "Open it in the inbox")}</p>`;
    // Checked here, not only left out of the mail: a crafted link approves no view the mail could
    // not show in full, nor one it did not show (a link signed before links carried the view).
    if (before.status === "pending") {
      const fitted = outsideFit(before, redactorOf(deps.airlock), MAIL_VIEW_BUDGET);
      const blind = blindLink(claims, fitted, before.id);
      if (blind) {
        await refuse(
          fitted.fits
            ? "email link approval without the view its mail showed"
            : "email link approval of a request too large to show in a mail",
          claims,
        );
        return html(c, 403, "Not from a mail link", paragraph(blind) + inbox);
      }
    }
    const usedBefore = before.decisions.some((d) => d.key === key);
    let after: ApprovalRequest;
    try {
      // A signed single-use link to the reviewer's address: authority decides the rest.
      const actor = actorOf({
        name: reviewer.name,
        groups: reviewer.groups,
        proof: "mail_link",
        channel: "email",
      });
      after = await deps.airlock.decideAs(actor, claims.r, {
        outcome: claims.o,
        method: claims.m,
        key,
        ...(rawComment && claims.o === "rejected" ? { comment: rawComment } : {}),
        // Bound to the view the mail showed: a changed request is not decided on the old one.
        ...(claims.v === undefined ? {} : { viewDigest: claims.v }),
      });
    } catch (err) {
      if (isViewChanged(err)) {
        return html(
          c,
          409,
          "The request changed",
          paragraph(
            "Not recorded: this request changed since the mail was sent, so what the mail showed is no longer what it asks. Look at it again before deciding.",
          ) + inbox,
        );
      }
      if (isAirlockError(err, "conflict")) {
        const current = (err as { request?: ApprovalRequest }).request ?? before;
        return html(
          c,
          409,
          "Already decided",
          paragraph(decidedText(current.decision, current.status)) + inbox,
        );
      }
      if (isAirlockError(err, "forbidden")) {
        await refuse(`email link refused by the state machine: ${err.message}`, claims);
        return html(c, 403, "Not allowed", paragraph(err.message) + inbox);
      }
      if (isAirlockError(err, "invalid_input")) {
        return html(c, 422, "Not recorded", paragraph(err.message) + inbox);
      }
      throw err;
    }
    const mine = after.decisions.find(
      (d) => d.key === key && sameIdentity(d.reviewer, reviewer.name),
    );
    if (mine && mine.outcome !== claims.o) {
      await refuse(
        `email link reused for another outcome (${claims.o} after ${mine.outcome})`,
        claims,
      );
      return html(
        c,
        409,
        "Link already used",
        paragraph(
          `This mail's links were already used to decide: ${mine.outcome}, at ${iso(mine.decidedAt)}. A mail's links decide once.`,
        ) + inbox,
      );
    }
    if (usedBefore) {
      return html(
        c,
        200,
        "Already decided",
        paragraph(decidedText(after.decision ?? mine, after.status)) + inbox,
      );
    }
    const waiting =
      after.status === "pending"
        ? paragraph(
            `Recorded. The request needs ${after.quorum} approvals; it stays pending until they are in.`,
          )
        : paragraph(
            `Done: ${after.status} by ${reviewer.name} (email) at ${iso(mine?.decidedAt ?? deps.now())}.`,
          );
    return html(c, 200, "Decision recorded", waiting + inbox);
  }

  return { show, decide };
}
