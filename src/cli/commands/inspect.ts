import type { Command } from "commander";
import { STATUSES, type Status } from "../../core/schemas.js";
import { LIST_ORDERS, type ListOrder } from "../../core/store.js";
import { type GlobalOptions, withGate } from "../context.js";
import { requireLocalStore } from "../existing-store.js";
import { describeRequest, printJson, relativeTime, table } from "../output.js";
import { oneOf, positiveInt } from "../parse.js";

interface ListOptions {
  status?: Status;
  action?: string;
  limit?: number;
  cursor?: string;
  order?: ListOrder;
  json?: boolean;
}

export function registerInspect(program: Command, globals: () => GlobalOptions): void {
  program
    .command("list")
    .description("list requests, newest first (or --order oldest | deadline)")
    .option("--status <status>", `one of ${STATUSES.join(", ")}`, oneOf("--status", STATUSES))
    .option("--action <name>", "only this action")
    .option("--limit <n>", "at most this many (up to 500)", positiveInt("--limit"))
    .option(
      "--order <order>",
      "newest (default), oldest, or deadline (soonest first; requests without one last)",
      oneOf("--order", LIST_ORDERS),
    )
    .option(
      "--cursor <cursor>",
      "continue where the last page ended (printed as next_cursor; same --order)",
    )
    .option("--json", "print JSON: { items, nextCursor }")
    .action(async (opts: ListOptions) => {
      await requireLocalStore(globals(), "list");
      await withGate(globals(), async ({ api: engine }) => {
        const page = await engine.list({
          ...(opts.order ? { order: opts.order } : {}),
          ...(opts.status ? { status: opts.status } : {}),
          ...(opts.action ? { action: opts.action } : {}),
          ...(opts.limit ? { limit: opts.limit } : {}),
          ...(opts.cursor ? { cursor: opts.cursor } : {}),
        });
        if (opts.json) {
          printJson(page);
          return;
        }
        if (page.items.length === 0) {
          process.stdout.write("no requests\n");
          return;
        }
        const now = Date.now();
        const rows = [["ID", "STATUS", "DEADLINE", "REQUESTER", "TITLE"]];
        for (const r of page.items) {
          rows.push([
            r.id,
            r.status,
            r.deadline !== undefined
              ? `${new Date(r.deadline).toISOString()} (${relativeTime(r.deadline, now)})`
              : "-",
            r.requester,
            r.title,
          ]);
        }
        process.stdout.write(`${table(rows)}\n`);
        if (page.nextCursor) process.stdout.write(`next_cursor: ${page.nextCursor}\n`);
      });
    });

  program
    .command("show")
    .description("show one request with its items and decisions")
    .argument("<id>", "request id")
    .option("--json", "print the request as JSON")
    .action(async (id: string, opts: { json?: boolean }) => {
      await requireLocalStore(globals(), "show");
      await withGate(globals(), async ({ api: engine }) => {
        const r = await engine.get(id);
        if (opts.json) printJson(r);
        else process.stdout.write(`${describeRequest(r, Date.now())}\n`);
      });
    });
}
