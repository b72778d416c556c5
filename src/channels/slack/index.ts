// The Slack channel: a `ChannelDriver` that posts requests as interactive messages and records the
// answers given with their buttons, their revision modal or a reply in their thread, over signed HTTP
// requests (`routes`) or a Socket Mode connection (`start`).
import type { SocketModeClient } from "@slack/socket-mode";
import type { Logger } from "pino";
import { parseOrThrow } from "../../core/validate.js";
import type { ChannelDriver, IdentityDirectory, InboundDeps } from "../types.js";
import { slackClient } from "./api.js";
import { deliverToSlack } from "./deliver.js";
import type { SlackContext } from "./interactions.js";
import { DEFAULT_SLACK_API_URL, type SlackOptions, slackOptionsSchema } from "./options.js";
import { slackRoutes } from "./routes.js";
import { startSocketMode } from "./socket.js";

export { type SlackOptions, slackOptionsSchema } from "./options.js";
export { slackSignature, verifySlackSignature } from "./signature.js";

export function createSlackChannel(
  name: string,
  rawOptions: SlackOptions,
  env: { logger: Logger; identities: IdentityDirectory },
): ChannelDriver {
  const options = parseOrThrow(slackOptionsSchema, rawOptions, `options of Slack channel ${name}`);
  const logger = env.logger.child({ channel: name });
  const client = slackClient(options.botToken, options.apiUrl, logger);
  let socket: SocketModeClient | undefined;
  let starting: Promise<void> | undefined;

  let botId: Promise<string | undefined> | undefined;
  const ownBotId = (): Promise<string | undefined> => {
    botId ??= client.auth.test().then(
      (r) => r.bot_id,
      (err: unknown) => {
        botId = undefined; // asked again next time
        logger.warn({ err }, "could not ask Slack which bot this channel's token belongs to");
        return undefined;
      },
    );
    return botId;
  };
  const contextFor = (deps: InboundDeps): SlackContext => ({
    deps,
    target: name,
    client,
    ownBotId,
  });

  return {
    name,
    type: "slack",
    deliver: (message, ctx) =>
      deliverToSlack(
        { client, channel: options.channel, identities: env.identities },
        message,
        ctx,
      ),
    routes: (deps) => slackRoutes(contextFor(deps), options.signingSecret),
    start(deps) {
      if (!options.socketMode || options.appToken === undefined) return Promise.resolve();
      // Started once, however often start() is called.
      starting ??= startSocketMode(
        contextFor(deps),
        { appToken: options.appToken, apiUrl: options.apiUrl ?? DEFAULT_SLACK_API_URL },
        logger,
      ).then((c) => {
        socket = c;
      });
      return starting;
    },
    async close() {
      await starting?.catch(() => {});
      const open = socket;
      socket = undefined;
      starting = undefined;
      await open?.disconnect();
    },
  };
}
