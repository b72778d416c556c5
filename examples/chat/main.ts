// Runs the chat example until Ctrl-C: `npx tsx examples/chat/main.ts`
// (AIRLOCK_PORT and CHAT_PORT choose the ports; by default 7420 and 7421).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startChatExample } from "./app.js";

const dir = mkdtempSync(join(tmpdir(), "airlock-chat-"));
const example = await startChatExample({
  dir,
  airlockPort: Number(process.env.AIRLOCK_PORT ?? 7420),
  chatPort: Number(process.env.CHAT_PORT ?? 7421),
});
process.stdout.write(
  [
    `chat app:  ${example.chatUrl}`,
    `inbox:     ${example.airlockUrl}/login  (reviewer rita, group finance: ${example.inboxToken})`,
    "Ask for the expense (quick: approve it in the chat) and the contract (full: decide it in the inbox).",
    "",
  ].join("\n"),
);
const stop = async () => {
  await example.close();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
