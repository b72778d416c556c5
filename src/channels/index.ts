// `airlock-hitl/channels`: Slack, email and webhooks on the durable outbox, as `airlock serve
// --config` composes them (the config, the channels, their dispatcher, routes and reminders), and
// for the receivers of Airlock's outgoing webhooks their Standard Webhooks signatures. Named exports
// only; the rest of src/channels is internal.
export {
  type ChannelsConfig,
  channelsConfigSchema,
  loadChannelsConfig,
  parseChannelsConfig,
} from "./config.js";
export {
  backoffMs,
  createDispatcher,
  type Dispatcher,
  type DispatcherOptions,
} from "./dispatcher.js";
export { createIdentityDirectory } from "./identities.js";
export { createReminders, type Reminders } from "./reminders.js";
export { createRouter, type Route } from "./routing.js";
export {
  type Channels,
  createChannels,
  type RunningChannels,
  startChannels,
} from "./setup.js";
export type {
  ChannelDriver,
  DeliveryContext,
  DeliveryResult,
  IdentityDirectory,
  InboundDeps,
  Reviewer,
} from "./types.js";
export {
  generateWebhookSecret,
  verifyWebhook,
  type WebhookEvent,
  WebhookVerificationError,
} from "./webhook.js";
