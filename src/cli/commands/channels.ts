// `airlock channels test <name>`: sends one test message through a configured channel, straight to
// its target (not through the outbox, so it needs no database), and says what happened: the target's
// answer on success, the reason otherwise (exit 1).
import type { Command } from "commander";
import pino from "pino";
import { loadChannelsConfig } from "../../channels/config.js";
import { createChannels } from "../../channels/setup.js";
import { newMessageId } from "../../core/ids.js";
import type { OutboxMessage } from "../../core/outbox.js";
import { CliError } from "../errors.js";
import { printJson } from "../output.js";
import { positiveInt } from "../parse.js";

export function registerChannels(program: Command): void {
  const channels = program
    .command("channels")
    .description("the configured Slack, email and webhook channels");
  channels
    .command("test <name>")
    .description("send a test message through one channel and say what happened")
    .option("--config <file>", "the channels config (AIRLOCK_CONFIG)")
    .option("--timeout <ms>", "give up after this long (30000)", positiveInt("--timeout"))
    .action(async (name: string, opts: { config?: string; timeout?: number }) => {
      const file = opts.config ?? process.env.AIRLOCK_CONFIG;
      if (!file) throw new CliError("channels test needs --config FILE (or AIRLOCK_CONFIG)");
      const logger = pino({ level: process.env.AIRLOCK_LOG_LEVEL ?? "error" }, pino.destination(2));
      const config = loadChannelsConfig(file);
      const { drivers } = await createChannels(config, { logger });
      const driver = drivers.find((d) => d.name === name);
      if (!driver) {
        throw new CliError(
          `no channel named \`${name}\` in ${file} (configured: ${drivers.map((d) => d.name).join(", ") || "none"})`,
        );
      }
      const now = Date.now();
      const message: OutboxMessage = {
        id: newMessageId(now),
        target: name,
        topic: "test",
        payload: { text: "A test message from Airlock: this channel works." },
        status: "pending",
        attempts: 1,
        availableAt: now,
        createdAt: now,
        updatedAt: now,
      };
      const result = await driver.deliver(message, {
        request: undefined,
        previous: [],
        publicUrl: config.publicUrl ?? "http://127.0.0.1:7420",
        now: () => Date.now(),
        signal: AbortSignal.timeout(opts.timeout ?? 30_000),
      });
      await driver.close?.();
      printJson({ channel: name, type: driver.type, messageId: message.id, ...result });
      if (!result.ok) {
        throw new CliError(`channel ${name} (${driver.type}): not delivered: ${result.error}`);
      }
    });
}
