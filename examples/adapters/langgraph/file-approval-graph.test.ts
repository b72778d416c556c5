// Pattern 4 as a LangGraph graph with airlockGate, offline: the small write passes by rule, a person
// approves one write, edits another (the edited content is what lands on disk), rejects the deletion
// (the file stays), and the write outside the sandbox is refused before any gate.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type Airlock, createAirlock, memoryStore } from "../../../src/index.js";
import { tempDir } from "../../../test/helpers.js";
import { fileApprovalPolicy } from "../../file-approval/approval-node.js";
import { defaultReviewer, runLangGraphFileApproval } from "./index.js";

let airlock: Airlock;
let dir: string;
let cleanup: () => void;
beforeEach(async () => {
  airlock = await createAirlock({ store: memoryStore(), policy: fileApprovalPolicy() });
  ({ dir, cleanup } = tempDir("airlock-lg-files-"));
});
afterEach(async () => {
  await airlock.close();
  cleanup();
});

it("runs pattern 4 as a LangGraph graph: rule, approval, edit, rejection, refusal", async () => {
  const edited = "export class PlayerController {}\n";
  const steps = await runLangGraphFileApproval({
    airlock,
    dir,
    reviewer: (r) =>
      r.title === "Create src/PlayerController.ts"
        ? {
            outcome: "approved",
            method: "edit",
            editedArgs: { ...r.args, content: edited },
            reviewer: "maya",
          }
        : defaultReviewer(r),
  });
  expect(steps.map((s) => [s.path, s.status])).toEqual([
    ["NOTES.md", "auto_executed"],
    ["src/PlayerController.ts", "executed"],
    ["config/settings.json", "executed"],
    ["docs/old-notes.md", "cancelled"],
    ["../outside.txt", "refused"],
  ]);
  expect(readFileSync(join(dir, "src/PlayerController.ts"), "utf8")).toBe(edited);
  expect(JSON.parse(readFileSync(join(dir, "config/settings.json"), "utf8")).player.maxSpeed).toBe(
    8,
  );
  expect(existsSync(join(dir, "docs/old-notes.md"))).toBe(true);
  expect(steps[3]?.detail).toContain("keep the old notes for now");
  expect(existsSync(join(dir, "..", "outside.txt"))).toBe(false);
  // One gate per operation that needed one, each approved one executed once.
  const gates = (await airlock.list({})).items.filter((r) => r.action.startsWith("files."));
  expect(gates).toHaveLength(4);
  const gateIds = new Set(gates.map((g) => g.id));
  const executed = (await airlock.audit()).filter(
    (e) => e.type === "executed" && gateIds.has(e.requestId ?? ""),
  );
  expect(executed.map((e) => e.requestId).sort()).toEqual(
    gates
      .filter((g) => g.status === "approved")
      .map((g) => g.id)
      .sort(),
  );
});
