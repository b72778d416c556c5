// A process that dies (SIGKILL) in the middle of a group commit: it seeds five pending requests,
// then transitions all five in one event-loop turn, and a temporary trigger kills the process when
// the fourth one's event is written, inside the batch's transaction. Env: DB=<file>.
import { sqliteStore } from "../../src/store/sqlite.js";
import { request } from "../audit/fixtures.js";
import { failWith, tell } from "../postgres/child.js";

const IDS = ["req_1", "req_2", "req_3", "req_4", "req_5"];

try {
  const path = process.env.DB ?? "";
  const seeding = sqliteStore(path);
  for (const id of IDS) {
    await seeding.insertRequest(request(id), [
      { type: "created", requestId: id, actor: "writer", at: 1, data: {} },
    ]);
  }
  await seeding.close();
  const store = sqliteStore(path, {
    configure(db) {
      db.function("airlock_test_crash", () => {
        process.kill(process.pid, "SIGKILL");
        return 0;
      });
      db.exec(`CREATE TEMP TRIGGER crash_mid_batch AFTER INSERT ON main.audit
        WHEN new.request_id = 'req_4' AND new.type = 'decided'
        BEGIN SELECT airlock_test_crash(); END`);
    },
  });
  tell({ type: "armed" });
  await Promise.all(
    IDS.map((id) => {
      const r = request(id);
      return store.transition({ ...r, status: "rejected", version: r.version + 1 }, r.version, [
        { type: "decided", requestId: id, actor: "alice", at: 2, data: { outcome: "rejected" } },
      ]);
    }),
  );
  tell({ type: "survived" });
  process.exit(0);
} catch (err) {
  failWith(err);
}
