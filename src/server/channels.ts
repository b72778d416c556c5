// The channels' inbound side on the HTTP server: each driver's routes (Slack interactions, email
// link pages, inbound mail) at /channels/<name>, outside the API's bearer authentication because
// each authenticates its caller itself (a signing secret, a signed single-use link); and the
// dependencies every inbound path gets, so a click or a reply decides through `airlock.decide`, the
// same state machine and identity checks as the inbox.
import { Hono } from "hono";
import type { Logger } from "pino";
import { limitRefusals } from "../channels/refusals.js";
import type { ChannelDriver, IdentityDirectory, InboundDeps } from "../channels/types.js";
import { clip } from "../core/text.js";
import type { Airlock } from "../engine/types.js";

export interface ServerChannels {
  drivers: readonly ChannelDriver[];
  identities: IdentityDirectory;
  /** This server's absolute base URL as people reach it (no trailing slash); a function when it is
   * known only once the server listens (its port). */
  publicUrl: string | (() => string);
}

/** The longest refusal reason kept (a sender's address or name can be of any length). */
const MAX_REASON = 500;

export function inboundDeps(
  airlock: Airlock,
  channels: Omit<ServerChannels, "drivers">,
  logger: Logger,
): InboundDeps {
  const base = channels.publicUrl;
  const now = () => Date.now();
  return {
    airlock,
    identities: channels.identities,
    logger,
    get publicUrl() {
      return (typeof base === "function" ? base() : base).replace(/\/+$/, "");
    },
    now,
    // Bounded in rate (limitRefusals) and in size: a refusal carries text the sender chose.
    refuse: limitRefusals(
      async (given) => {
        const refusal = { ...given, reason: clip(given.reason, MAX_REASON) };
        logger.warn(refusal, "channel input refused");
        const data = {
          refused: true,
          channel: refusal.channel,
          target: refusal.target,
          reason: refusal.reason,
          ...(refusal.actor === undefined ? {} : { claimedActor: clip(refusal.actor, 200) }),
        };
        try {
          await airlock.record({
            type: "notified",
            actor: "system",
            data,
            ...(refusal.requestId === undefined ? {} : { requestId: clip(refusal.requestId, 200) }),
          });
        } catch (err) {
          logger.error({ err }, "could not audit a refused channel input");
        }
      },
      now,
      logger,
    ),
  };
}

/** The drivers' routes, each under /channels/<its name>. */
export function channelRoutes(deps: InboundDeps, drivers: readonly ChannelDriver[]): Hono {
  const app = new Hono();
  for (const driver of drivers) {
    const routes = driver.routes?.(deps);
    if (routes) app.route(`/channels/${driver.name}`, routes);
  }
  return app;
}
