// The email channel's HTTP routes, mounted by the server at `/channels/<name>` outside bearer auth:
//   GET  /l/:token   the confirmation page of a one-click link (decides nothing)
//   POST /l/:token   the confirmed decision
//   POST /inbound    raw mail (`message/rfc822`) forwarded by a hosted mail service, with the bearer
//                    token `inbound.webhookSecret`; 404 when none is configured
import { createHash, timingSafeEqual } from "node:crypto";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { isAirlockError } from "../../core/errors.js";
import { domainProblem, problem, problemResponse } from "../../core/problem.js";
import type { InboundDeps } from "../types.js";
import type { EmailContext } from "./context.js";
import { PAGE_HEADERS, page, paragraph } from "./html.js";
import { errorText, type InboundResult, MAX_INBOUND_BYTES } from "./inbound.js";
import { linkHandlers } from "./links.js";

const FORM_LIMIT_BYTES = 16 * 1024;

export function emailRoutes(
  email: EmailContext,
  deps: InboundDeps,
  handleInboundMail: (raw: Buffer) => Promise<InboundResult>,
): Hono {
  const app = new Hono();
  const links = linkHandlers(email, deps);

  app.onError((err, c) => {
    const inbound = c.req.path.endsWith("/inbound");
    // A storage fault is passing: a 503 with Retry-After, as the API answers it, so the mail
    // service (or the person) tries again.
    if (isAirlockError(err) && err.code === "store_unavailable") {
      const { body, headers } = domainProblem(err, email.logger);
      if (inbound) return problemResponse(body, headers);
      const wait = headers["retry-after"] ?? "a few";
      return c.html(
        page(
          "Try again in a moment",
          paragraph(
            `Airlock's storage is unavailable right now; open the link again in ${wait} seconds.`,
          ),
        ),
        503,
        { ...PAGE_HEADERS, ...headers },
      );
    }
    // The path of a link page holds the link's token, a live credential: never logged.
    const path = c.req.path.replace(/\/l\/[^/]+/, "/l/[token]");
    email.logger.error({ err: errorText(err), path }, "email channel route failed");
    if (inbound) {
      return problemResponse(
        problem(500, "internal", "the server failed to handle this mail; see its log"),
      );
    }
    return c.html(
      page(
        "Something went wrong",
        paragraph("The server could not handle this link; try the inbox."),
      ),
      500,
      PAGE_HEADERS,
    );
  });

  app.get("/l/:token", (c) => links.show(c));
  app.post(
    "/l/:token",
    bodyLimit({
      maxSize: FORM_LIMIT_BYTES,
      onError: (c) =>
        c.html(page("Too large", paragraph("The form is too large.")), 413, PAGE_HEADERS),
    }),
    (c) => links.decide(c),
  );

  const secret = email.options.inbound?.webhookSecret;
  app.post(
    "/inbound",
    async (c, next) => {
      if (!secret) {
        return problemResponse(
          problem(
            404,
            "route_not_found",
            `the email channel "${email.name}" has no inbound webhook: set inbound.webhookSecret`,
          ),
        );
      }
      const given = /^Bearer\s+(.+)$/i.exec(c.req.header("authorization") ?? "")?.[1]?.trim();
      if (!given || !sameSecret(given, secret)) {
        return problemResponse(
          problem(
            401,
            "unauthorized",
            "this route needs the channel's inbound.webhookSecret as a bearer token (Authorization: Bearer …)",
          ),
          { "www-authenticate": 'Bearer realm="airlock-email-inbound"' },
        );
      }
      const type = (c.req.header("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
      if (type !== "message/rfc822") {
        return problemResponse(
          problem(
            415,
            "unsupported_media_type",
            `send the raw mail as Content-Type: message/rfc822, got \`${type || "none"}\``,
          ),
        );
      }
      return next();
    },
    bodyLimit({
      maxSize: MAX_INBOUND_BYTES,
      onError: () =>
        problemResponse(
          problem(413, "payload_too_large", "a mail may have at most 1 MiB (1048576 bytes)"),
        ),
    }),
    async (c) => {
      const raw = Buffer.from(await c.req.arrayBuffer());
      if (raw.length === 0) {
        return problemResponse(
          problem(400, "invalid_input", "the body is empty: send the raw mail"),
        );
      }
      const result = await handleInboundMail(raw);
      return c.json(result, 200, { "cache-control": "no-store" });
    },
  );
  return app;
}

function sameSecret(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}
