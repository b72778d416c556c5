// Another process holding a SQLite file's write lock (BEGIN IMMEDIATE) until told to let go.
// Env: DB=<file>.
import Database from "better-sqlite3";
import { failWith, tell } from "../postgres/child.js";

try {
  const db = new Database(process.env.DB ?? "");
  db.exec("BEGIN IMMEDIATE");
  tell({ type: "locked" });
  process.on("message", (m: { type?: string }) => {
    if (m.type !== "release") return;
    db.exec("COMMIT");
    db.close();
    tell({ type: "released" });
    process.exit(0);
  });
} catch (err) {
  failWith(err);
}
