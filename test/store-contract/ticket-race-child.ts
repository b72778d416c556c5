// A process racing for tickets on one SQLite file (sqlite-ticket-race.int.test.ts): opens the store,
// says `ready`, waits for `go` on stdin, takes each key of argv with its own holder at once, prints
// the answers as one JSON line and exits.
// Usage: node --import tsx ticket-race-child.ts FILE HOLDER NOW KEY...
import { createInterface } from "node:readline";
import { sqliteStore } from "../../src/store/sqlite.js";

const [file, holder, now, ...keys] = process.argv.slice(2);
if (!file || !holder || !now || keys.length === 0) {
  throw new Error("usage: ticket-race-child.ts FILE HOLDER NOW KEY...");
}
const store = sqliteStore(file);
const take = store.takeTicket?.bind(store);
if (!take) throw new Error("the SQLite store has no takeTicket");
process.stdout.write("ready\n");
const lines = createInterface({ input: process.stdin });
for await (const line of lines) if (line === "go") break;
lines.close();
const answers = await Promise.all(
  keys.map((key) => take({ scope: "bot", key, holder, now: Number(now), leaseMs: 60_000 })),
);
process.stdout.write(`${JSON.stringify(answers)}\n`);
await store.close();
