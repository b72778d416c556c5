// From a checked config to running parts: one driver per configured channel (each checks its own
// options and names the channel in its errors), the identity directory and the router. Nothing here
// opens a connection; `startChannels` starts the inbound listeners, the dispatcher and the reminders.
import type { Logger } from "pino";
import { redactorOf } from "../audit/redact.js";
import { InvalidInputError } from "../core/errors.js";
import type { Store } from "../core/store.js";
import type { OutboxRouter } from "../engine/outbox-drafts.js";
import type { ChannelsConfig } from "./config.js";
import { createDispatcher, type Dispatcher } from "./dispatcher.js";
import { createIdentityDirectory } from "./identities.js";
import { createReminders, type Reminders } from "./reminders.js";
import { createRouter } from "./routing.js";
import type { ChannelDriver, IdentityDirectory, InboundDeps } from "./types.js";

export interface Channels {
  drivers: ChannelDriver[];
  identities: IdentityDirectory;
  router: OutboxRouter;
  config: ChannelsConfig;
}

/** Each channel type's module is loaded only when a channel of that type is configured (Slack's
 * client library alone takes a while to load). */
const FACTORIES = {
  webhook: async () => (await import("./webhook.js")).createWebhookChannel,
  email: async () => (await import("./email/index.js")).createEmailChannel,
  slack: async () => (await import("./slack/index.js")).createSlackChannel,
} as const;

type Factory = (
  name: string,
  options: unknown,
  deps: { logger: Logger; identities: IdentityDirectory },
) => ChannelDriver;

export async function createChannels(
  config: ChannelsConfig,
  env: { logger: Logger },
): Promise<Channels> {
  const identities = createIdentityDirectory(config.identities);
  const deps = { logger: env.logger, identities };
  const drivers: ChannelDriver[] = [];
  for (const [name, options] of Object.entries(config.channels)) {
    const create = (await FACTORIES[options.type]()) as Factory;
    try {
      drivers.push(create(name, options, deps));
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      throw new InvalidInputError(`config at channels.${name}: ${detail}`);
    }
  }
  return { drivers, identities, router: createRouter(config.routes), config };
}

export interface RunningChannels {
  dispatcher: Dispatcher;
  reminders: Reminders | undefined;
  close(): Promise<void>;
}

/** Starts the inbound listeners, the dispatcher (woken by this process's commits through `wake` and by
 * other processes' through the store's change signal) and the reminders. */
export async function startChannels(
  channels: Channels,
  deps: {
    store: Store;
    inbound: InboundDeps;
    logger: Logger;
    /** Where a dispatcher created now is handed, so commits can wake it. */
    publicUrl: () => string;
  },
): Promise<RunningChannels> {
  const { store, logger } = deps;
  const started: ChannelDriver[] = [];
  const dispatcher = createDispatcher({
    store,
    drivers: channels.drivers,
    logger,
    get publicUrl() {
      return deps.publicUrl();
    },
    redaction: redactorOf(deps.inbound.airlock),
    ...channels.config.outbox,
  });
  const reminders = channels.config.reminders
    ? createReminders({
        store,
        router: channels.router,
        beforeMs: channels.config.reminders.beforeDeadlineSeconds * 1000,
        logger,
        onEnqueued: () => dispatcher.wake(),
      })
    : undefined;
  let unsubscribe: (() => void) | undefined;
  try {
    for (const d of channels.drivers) {
      if (!d.start) continue;
      await d.start(deps.inbound);
      started.push(d);
    }
    unsubscribe = store.onExternalChange(() => dispatcher.wake());
    dispatcher.start();
    reminders?.start();
  } catch (err) {
    unsubscribe?.();
    await dispatcher.close();
    for (const d of started) await d.close?.().catch(() => {});
    throw err;
  }
  return {
    dispatcher,
    reminders,
    async close() {
      await reminders?.close();
      unsubscribe?.();
      await dispatcher.close();
      for (const d of channels.drivers) {
        await d.close?.().catch((err: unknown) => logger.error({ err }, "channel close failed"));
      }
    },
  };
}
