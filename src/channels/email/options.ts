// The email channel's options, checked in one place: the SMTP server mail leaves through, the
// addresses it is sent from and answered to, the secret that signs links and reply addresses, and
// the optional inbound side (an SMTP listener, a webhook for hosted mail services).
import { z } from "zod";
import { parseOrThrow } from "../../core/validate.js";

/** Reply addresses are `<replyLocalPart>+<token>@<replyDomain>`, and a local part may have at most
 * 64 characters (RFC 5321): the token takes 47 of them with its `+`, so the local part may take 17. */
export const MAX_REPLY_LOCAL_PART = 17;

/** @default 24 hours */
export const DEFAULT_LINK_TTL_SECONDS = 24 * 3600;

export const emailOptionsSchema = z
  .object({
    type: z.literal("email"),
    smtp: z
      .object({
        host: z.string().min(1),
        port: z.number().int().min(1).max(65535),
        /** TLS from the first byte (port 465). @default true on port 465, else STARTTLS when offered */
        secure: z.boolean().optional(),
        auth: z
          .object({ user: z.string().min(1), pass: z.string().min(1) })
          .strict()
          .optional(),
      })
      .strict(),
    /** The sender, e.g. `Airlock <airlock@example.com>`. */
    from: z.string().min(3),
    /** Signs links and reply addresses (HMAC-SHA256). Keep it secret; changing it voids every link
     * and reply address sent so far. */
    linkSecret: z.string().min(32, "must be at least 32 characters (a random string)"),
    replyDomain: z
      .string()
      .regex(/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i, "must be a domain name, e.g. reply.example.com"),
    replyLocalPart: z
      .string()
      .regex(
        new RegExp(`^[a-z0-9][a-z0-9._-]{0,${MAX_REPLY_LOCAL_PART - 1}}$`, "i"),
        `must be 1 to ${MAX_REPLY_LOCAL_PART} letters, digits, dots, dashes or underscores (the token needs the rest of the 64 characters of an address's local part)`,
      ),
    /** How long a decision link stays valid, in seconds. @default 86400 */
    linkTtlSeconds: z
      .number()
      .int()
      .min(60)
      .max(30 * 24 * 3600)
      .default(DEFAULT_LINK_TTL_SECONDS),
    inbound: z
      .object({
        /** Listen for replies over SMTP on this port (0: any free port). */
        smtpPort: z.number().int().min(0).max(65535).optional(),
        /** The address the SMTP listener binds. @default "127.0.0.1" */
        host: z.string().min(1).default("127.0.0.1"),
        /** Bearer token of `POST /channels/<name>/inbound`; the route answers 404 without one. */
        webhookSecret: z.string().min(16, "must be at least 16 characters").optional(),
        /** The authserv-id of the inbound mail server (e.g. `mx.example.com`) when it checks DKIM and
         * DMARC and adds an Authentication-Results header saying so. Set, a reply decides only when the
         * topmost such header shows `dmarc=pass`, or `dkim=pass` for the From address's domain;
         * missing, failing or foreign results refuse it. */
        authservId: z
          .string()
          .regex(/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i, "must be a host name, e.g. mx.example.com")
          .optional(),
      })
      .strict()
      .optional(),
    /** Addresses that get every message besides the approvers (e.g. a team list). */
    to: z.array(z.email()).max(100).default([]),
  })
  .strict();

export type EmailOptions = z.input<typeof emailOptionsSchema>;
export type ResolvedEmailOptions = z.output<typeof emailOptionsSchema>;

export function resolveEmailOptions(options: unknown): ResolvedEmailOptions {
  return parseOrThrow(emailOptionsSchema, options, "email channel options");
}
