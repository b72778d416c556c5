// `airlock serve --config airlock.config.json`: the channels, the people, the routes, reminders and
// the outbox's retry settings, read and checked in one place. A secret may be written as
// `{ "env": "NAME" }` so it stays out of the file; it is read from the environment when the file is
// loaded, and a missing variable is an error that names it (never its value).
import { readFileSync } from "node:fs";
import { z } from "zod";
import { InvalidInputError } from "../core/errors.js";
import { identityProblem } from "../core/identity.js";
import { identityClashes, identitySchema } from "./identities.js";
import { routeSchema } from "./routing.js";

export const CHANNEL_TYPES = ["slack", "email", "webhook"] as const;

/** A channel's own options are checked by its driver (`createChannels`); here only its type. */
const channelEntrySchema = z.looseObject({ type: z.enum(CHANNEL_TYPES) });

const count = (max: number) => z.number().int().positive().max(max);

export const channelsConfigSchema = z
  .object({
    /** This server's address as people reach it, for links in messages and Slack's Edit button.
     * @default http://127.0.0.1:<port> */
    publicUrl: z.url().optional(),
    channels: z
      .record(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/), channelEntrySchema)
      .default({}),
    identities: z.record(z.string().min(1), identitySchema).default({}),
    routes: z.array(routeSchema).default([]),
    /** A nudge this long before a pending request's deadline, through the same routes (topic `reminder`). */
    reminders: z
      .object({ beforeDeadlineSeconds: count(30 * 24 * 3600) })
      .strict()
      .optional(),
    outbox: z
      .object({
        maxAttempts: count(100),
        baseDelayMs: count(3_600_000),
        maxDelayMs: count(24 * 3_600_000),
        leaseMs: count(3_600_000),
        attemptTimeoutMs: count(600_000),
        pollMs: count(600_000),
      })
      .partial()
      .strict()
      .default({}),
  })
  .strict()
  .superRefine((config, ctx) => {
    // A person's name is refused like every name that enters (identityProblem: mixed scripts).
    for (const person of Object.keys(config.identities)) {
      const why = identityProblem(person);
      if (why) {
        ctx.addIssue({
          code: "custom",
          path: ["identities", person],
          message: `\`${person}\` ${why}`,
        });
      }
    }
    for (const clash of identityClashes(config.identities)) {
      ctx.addIssue({
        code: "custom",
        path: ["identities", clash.person],
        message: `${clash.message}: each person needs their own (one would decide as the other)`,
      });
    }
    config.routes.forEach((route, i) => {
      for (const name of route.channels) {
        if (!(name in config.channels)) {
          ctx.addIssue({
            code: "custom",
            path: ["routes", i, "channels"],
            message: `route ${i} names channel \`${name}\`, which \`channels\` does not configure (configured: ${Object.keys(config.channels).join(", ") || "none"})`,
          });
        }
      }
    });
  });
export type ChannelsConfig = z.output<typeof channelsConfigSchema>;

/** Reads, resolves `{ "env": NAME }` secrets in, and checks a config file. */
export function loadChannelsConfig(
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): ChannelsConfig {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new InvalidInputError(`cannot read config file ${file}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new InvalidInputError(`config file ${file} is not JSON: ${(err as Error).message}`);
  }
  return parseChannelsConfig(json, env, file);
}

export function parseChannelsConfig(
  json: unknown,
  env: NodeJS.ProcessEnv = process.env,
  source = "config",
): ChannelsConfig {
  const resolved = resolveSecrets(json, env, []);
  const parsed = channelsConfigSchema.safeParse(resolved);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? ` at ${issue.path.join(".")}` : "";
    throw new InvalidInputError(`${source}${where}: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
}

function resolveSecrets(value: unknown, env: NodeJS.ProcessEnv, path: string[]): unknown {
  if (Array.isArray(value))
    return value.map((v, i) => resolveSecrets(v, env, [...path, String(i)]));
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value);
  if (entries.length === 1 && entries[0]?.[0] === "env") {
    const name = entries[0][1];
    if (typeof name !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new InvalidInputError(
        `config at ${path.join(".")}: \`env\` must name an environment variable`,
      );
    }
    const secret = env[name];
    if (secret === undefined || secret === "") {
      throw new InvalidInputError(
        `config at ${path.join(".")}: environment variable ${name} is not set`,
      );
    }
    return secret;
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, resolveSecrets(v, env, [...path, k])]));
}
