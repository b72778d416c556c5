// Writes enough requests for the checkpoint thread to start, then leaves the store open and returns:
// the process must still exit on its own (the thread does not keep it alive).
import { sqliteStore } from "../../src/store/sqlite.js";
import { request } from "../audit/fixtures.js";

const path = process.argv[2];
if (!path) throw new Error("usage: checkpoint-exit-child.ts DB");
const store = sqliteStore(path);
for (let i = 0; i < 300; i++) {
  const id = `req-${String(i).padStart(4, "0")}`;
  await store.insertRequest(request(id), [
    { type: "created", requestId: id, actor: "writer", at: 1, data: {} },
  ]);
}
console.log("written");
