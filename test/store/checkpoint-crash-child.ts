// Creates and rejects requests one after another, printing each id once its decision committed,
// while the checkpoint thread copies the WAL (the connection's own automatic checkpoint is off, so
// only the thread does), until the test kills it (SIGKILL) or it reaches its bound.
// Usage: checkpoint-crash-child.ts DB
import { sqliteStore } from "../../src/store/sqlite.js";
import { request } from "../audit/fixtures.js";

const path = process.argv[2];
if (!path) throw new Error("usage: checkpoint-crash-child.ts DB");
const store = sqliteStore(path, {
  onError: (err) => console.log(`error ${err.message}`),
  configure: (db) => db.pragma("wal_autocheckpoint = 0"),
});
const until = Date.now() + 25_000;
for (let i = 0; i < 20_000 && Date.now() < until; i++) {
  const id = `req-${String(i).padStart(5, "0")}`;
  const r = request(id);
  await store.insertRequest(r, [
    { type: "created", requestId: id, actor: "writer", at: 1, data: {} },
  ]);
  const done = await store.transition(
    { ...r, status: "rejected", version: r.version + 1 },
    r.version,
    [{ type: "decided", requestId: id, actor: "alice", at: 2, data: { outcome: "rejected" } }],
  );
  if (!done.ok) throw new Error(`${id} was not rejected`);
  console.log(`committed ${id}`);
}
console.log("bound reached");
