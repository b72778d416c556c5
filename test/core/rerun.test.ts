import { describe, expect, it } from "vitest";
import { rerunner } from "../../src/core/rerun.js";

function gate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describe("rerunner", () => {
  it("runs once more after the run under way when called meanwhile, sharing that run", async () => {
    const gates = [gate(), gate()];
    let runs = 0;
    const r = rerunner(async () => {
      const g = gates[runs];
      runs++;
      await g?.opened;
    });
    const first = r.run();
    expect(r.busy).toBe(true);
    const second = r.run();
    const third = r.run();
    expect(second).toBe(first);
    expect(third).toBe(first);
    gates[0]?.open();
    gates[1]?.open();
    await first;
    expect(runs).toBe(2);
    expect(r.busy).toBe(false);
    await r.run();
    expect(runs).toBe(3);
  });

  it("does not run again once stopped, and a failed run rejects and frees the runner", async () => {
    let stopped = false;
    let runs = 0;
    const g = gate();
    const r = rerunner(
      async () => {
        runs++;
        await g.opened;
      },
      () => stopped,
    );
    const first = r.run();
    void r.run();
    stopped = true;
    g.open();
    await first;
    expect(runs).toBe(1);

    const failing = rerunner(async () => {
      throw new Error("boom");
    });
    await expect(failing.run()).rejects.toThrow("boom");
    expect(failing.busy).toBe(false);
  });
});
