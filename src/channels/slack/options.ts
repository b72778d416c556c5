// The options of a configured Slack channel, checked with one strict schema (unknown keys are a
// mistake in the configuration file, not something to ignore).
import { z } from "zod";

export const DEFAULT_SLACK_API_URL = "https://slack.com/api/";

export const slackOptionsSchema = z
  .object({
    type: z.literal("slack"),
    /** The bot's token (`xoxb-…`), for chat.postMessage and the other Web API calls. */
    botToken: z.string().min(1),
    /** The app's signing secret: every interaction and event over HTTP must carry its signature. */
    signingSecret: z.string().min(1),
    /** Where requests are posted: a channel name ("#ops-approvals") or id ("C0123ABCD"). */
    channel: z.string().trim().min(1),
    /** The Web API's base URL. @default "https://slack.com/api/" */
    apiUrl: z.string().url().optional(),
    /** The app-level token (`xapp-…`, scope connections:write), needed with `socketMode`. */
    appToken: z.string().min(1).optional(),
    /** Receive interactions and events over a Socket Mode connection instead of a public request URL.
     * @default false */
    socketMode: z.boolean().optional(),
  })
  .strict()
  .refine((o) => !o.socketMode || o.appToken !== undefined, {
    message: "`socketMode: true` needs `appToken` (an app-level token with connections:write)",
    path: ["appToken"],
  });

export type SlackOptions = z.input<typeof slackOptionsSchema>;
