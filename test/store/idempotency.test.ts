// Idempotency keys are scoped per requester, end to end through the engine: agent B using agent A's
// key creates its own request (no 409 for A later, nothing learned about A's keys).
import { describe, expect, it } from "vitest";
import { createAirlock } from "../../src/engine/engine.js";
import { memoryStore } from "../../src/store/memory.js";
import { sqliteStore } from "../../src/store/sqlite.js";

describe.each([
  ["memory", () => memoryStore()],
  ["sqlite", () => sqliteStore(":memory:")],
])("idempotency keys per requester (%s)", (_name, make) => {
  it("another agent's key does not collide", async () => {
    const engine = await createAirlock({ store: make(), sweeper: false });
    try {
      const b = await engine.request({ title: "B first", key: "deploy-1", requester: "agent-b" });
      const a = await engine.request({ title: "A's own", key: "deploy-1", requester: "agent-a" });
      expect(a.id).not.toBe(b.id);
      expect(a.requester).toBe("agent-a");
      const replay = await engine.request({
        title: "A's own",
        key: "deploy-1",
        requester: "agent-a",
      });
      expect(replay.id).toBe(a.id);
      expect((await engine.list({})).items).toHaveLength(2);
    } finally {
      await engine.close();
    }
  });
});
