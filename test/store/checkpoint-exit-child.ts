// Writes enough requests for the checkpoint thread to start, waits until the thread has copied
// pages into the database file (the connection's own automatic checkpoint is off), then leaves the
// store open and returns: the process must still exit on its own (the thread does not keep it alive).
import { statSync } from "node:fs";
import { sqliteStore } from "../../src/store/sqlite.js";
import { request } from "../audit/fixtures.js";

const path = process.argv[2];
if (!path) throw new Error("usage: checkpoint-exit-child.ts DB");
const store = sqliteStore(path, {
  onError: (err) => console.log(`error ${err.message}`),
  configure: (db) => db.pragma("wal_autocheckpoint = 0"),
});
const before = statSync(path).size;
for (let i = 0; i < 300; i++) {
  const id = `req-${String(i).padStart(4, "0")}`;
  await store.insertRequest(request(id), [
    { type: "created", requestId: id, actor: "writer", at: 1, data: {} },
  ]);
}
const until = Date.now() + 10_000;
while (statSync(path).size <= before && Date.now() < until) {
  await new Promise((r) => setTimeout(r, 20));
}
console.log(statSync(path).size > before ? "copied" : "not copied");
