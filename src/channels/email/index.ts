// The email channel's public names.
export { createEmailChannel, type EmailChannel } from "./channel.js";
export type { Envelope, InboundResult } from "./inbound.js";
export { REPLY_GRAMMAR } from "./inbound.js";
export {
  DEFAULT_LINK_TTL_SECONDS,
  type EmailOptions,
  emailOptionsSchema,
  type ResolvedEmailOptions,
} from "./options.js";
