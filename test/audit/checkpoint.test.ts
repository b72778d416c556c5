// The checkpoint writer: at most one line per interval (the newest head noted), everything noted is
// written by flush, each line signed; a torn last line (a crash mid-write) is not taken for tampering.
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  checkpointMac,
  createCheckpointWriter,
  readCheckpoints,
} from "../../src/audit/checkpoint.js";
import { tempDir } from "../helpers.js";

const key = Buffer.from("c".repeat(32));
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function file() {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return join(t.dir, "checkpoints");
}

describe("checkpoint writer", () => {
  it("writes at most one line per interval, the newest head, and the rest at flush", async () => {
    const path = file();
    const w = createCheckpointWriter({ file: path, key, intervalMs: 60_000 });
    for (let seq = 1; seq <= 100; seq++) w.note({ seq, hash: `h${seq}` });
    await new Promise((r) => setTimeout(r, 50));
    // One line, at once, for the newest head noted in that moment.
    let lines = readFileSync(path, "utf8").trim().split("\n");
    expect(lines.map((l) => JSON.parse(l).seq)).toEqual([100]);
    // Within the interval: nothing more is written until it ends (or until flush).
    for (let seq = 101; seq <= 200; seq++) w.note({ seq, hash: `h${seq}` });
    w.note({ seq: 150, hash: "older" }); // an older head never replaces a newer one
    await new Promise((r) => setTimeout(r, 50));
    expect(readFileSync(path, "utf8").trim().split("\n")).toHaveLength(1);
    await w.flush();
    lines = readFileSync(path, "utf8").trim().split("\n");
    const last = JSON.parse(lines[1] ?? "{}");
    expect(lines).toHaveLength(2);
    expect(last).toMatchObject({ seq: 200, hash: "h200" });
    expect(last.mac).toBe(checkpointMac(key, { seq: 200, hash: "h200", at: last.at }));
    const read = await readCheckpoints(path, key);
    expect(read.bad).toBeUndefined();
    expect(read.checkpoints.map((c) => c.seq)).toEqual([100, 200]);
  });

  it("a torn last line is skipped; an edited or foreign line is reported", async () => {
    const path = file();
    const w = createCheckpointWriter({ file: path, key, intervalMs: 1 });
    w.note({ seq: 3, hash: "h3" });
    await w.flush();
    appendFileSync(path, '{"seq":4,"ha');
    expect((await readCheckpoints(path, key)).checkpoints).toHaveLength(1);
    expect((await readCheckpoints(path, Buffer.from("d".repeat(32)))).bad).toMatchObject({
      line: 1,
    });
    expect(await readCheckpoints(join(path, "..", "missing"), key)).toEqual({ checkpoints: [] });
  });

  it("a checkpoint file that cannot be written is refused at once", () => {
    const path = join(file(), "..", "no-such-folder", "checkpoints");
    expect(() => createCheckpointWriter({ file: path, key })).toThrow(
      /cannot write the checkpoint file .*no-such-folder/,
    );
  });
});
