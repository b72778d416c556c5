// Socket Mode: Slack sends interactions and events over a WebSocket the app opens (with its app-level
// token) instead of calling a public URL. Each envelope is acknowledged, and handled by the same code
// as the HTTP routes; the connection itself authenticates Slack, so there is no signature to check.
import { SocketModeClient } from "@slack/socket-mode";
import type { Logger } from "pino";
import { slackLogger } from "./api.js";
import { handleEvent } from "./events.js";
import { handleInteraction, type SlackContext } from "./interactions.js";
import { record } from "./json.js";

interface Envelope {
  ack(response?: Record<string, unknown>): Promise<void>;
  type: string;
  body: unknown;
}

export async function startSocketMode(
  ctx: SlackContext,
  options: { appToken: string; apiUrl: string },
  logger: Logger,
): Promise<SocketModeClient> {
  const client = new SocketModeClient({
    appToken: options.appToken,
    logger: slackLogger(logger),
    clientOptions: { slackApiUrl: options.apiUrl, retryConfig: { retries: 2 } },
  });
  client.on("slack_event", (envelope: Envelope) => {
    void dispatch(ctx, envelope).catch((err: unknown) => {
      logger.error({ err, target: ctx.target }, "a Slack Socket Mode envelope failed");
    });
  });
  await client.start();
  return client;
}

async function dispatch(ctx: SlackContext, envelope: Envelope): Promise<void> {
  const body = record(envelope.body);
  if (envelope.type === "interactive" && body) {
    // A modal's answer (response_action) travels in the acknowledgement.
    const answer = await handleInteraction(ctx, body);
    await envelope.ack(answer);
    return;
  }
  // Events are acknowledged first: Slack re-sends an envelope not acknowledged within 3 s.
  await envelope.ack();
  if (envelope.type === "events_api" && body) await handleEvent(ctx, body);
}
