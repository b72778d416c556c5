// The HTTP routes Slack calls (mounted at /channels/<name>): `POST /interactions` (buttons, modal
// submissions) and `POST /events` (thread replies, the URL check). Outside bearer auth: each request
// must carry Slack's signature, made with the app's signing secret over the raw body, and be recent.
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { problem, problemResponse } from "../../core/problem.js";
import { refuse } from "./decide.js";
import { handleEvent } from "./events.js";
import { handleInteraction, type SlackContext } from "./interactions.js";
import { record, text } from "./json.js";
import { verifySlackSignature } from "./signature.js";

/** Slack's payloads are small; anything much larger is not Slack. */
const MAX_BODY_BYTES = 1024 * 1024;

export function slackRoutes(ctx: SlackContext, signingSecret: string): Hono {
  const app = new Hono();
  app.use(
    "*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () =>
        problemResponse(
          problem(413, "payload_too_large", `the body is larger than ${MAX_BODY_BYTES} bytes`),
        ),
    }),
  );

  /** The raw body once its signature holds, else the 401 to answer (the refusal audited). */
  async function signedBody(
    c: { req: { header(name: string): string | undefined; text(): Promise<string> } },
    route: string,
  ): Promise<{ ok: true; raw: string } | { ok: false; response: Response }> {
    const raw = await c.req.text();
    const check = verifySlackSignature(
      signingSecret,
      {
        signature: c.req.header("x-slack-signature"),
        timestamp: c.req.header("x-slack-request-timestamp"),
      },
      raw,
      ctx.deps.now(),
    );
    if (check.ok) return { ok: true, raw };
    ctx.deps.logger.warn({ target: ctx.target, route }, `refused a Slack call: ${check.reason}`);
    await refuse(ctx, `${route}: ${check.reason}`);
    return {
      ok: false,
      response: problemResponse(
        problem(401, "unauthorized", `not a signed Slack request: ${check.reason}`),
      ),
    };
  }

  app.post("/interactions", async (c) => {
    const signed = await signedBody(c, "interactions");
    if (!signed.ok) return signed.response;
    let payload: Record<string, unknown> | undefined;
    try {
      payload = record(JSON.parse(new URLSearchParams(signed.raw).get("payload") ?? "null"));
    } catch {
      payload = undefined;
    }
    if (!payload) {
      return problemResponse(
        problem(400, "invalid_input", "expected a form body with a JSON `payload` field"),
      );
    }
    const answer = await handleInteraction(ctx, payload);
    return answer === undefined ? c.body(null, 200) : c.json(answer, 200);
  });

  app.post("/events", async (c) => {
    const signed = await signedBody(c, "events");
    if (!signed.ok) return signed.response;
    let body: Record<string, unknown> | undefined;
    try {
      body = record(JSON.parse(signed.raw));
    } catch {
      body = undefined;
    }
    if (!body || !text(body.type)) {
      return problemResponse(problem(400, "invalid_input", "expected a JSON Events API body"));
    }
    const answer = await handleEvent(ctx, body);
    return answer === undefined ? c.body(null, 200) : c.json(answer, 200);
  });
  return app;
}
