// The guard's comparison (bench/check.ts), without running any benchmark: the direction of each
// figure, the 15 % threshold, and what fails besides a worse figure.
import { expect, it, describe as suite } from "vitest";
import { parseArgs } from "../../bench/args.js";
import {
  compare,
  describe,
  GUARDED,
  type Guarded,
  loadLine,
  medianFigures,
  parseFigures,
  parseLoad,
  passed,
  THRESHOLD,
  withinLimit,
  worseBy,
} from "../../bench/check.js";

const up: Guarded = { name: "x.up_ratio", better: "higher" };
const down: Guarded = { name: "x.down_ratio", better: "lower" };
const judge = (g: Guarded, baseline: number, measured: number) =>
  compare({ [g.name]: baseline }, { [g.name]: measured }, { guarded: [g] })[0];

suite("the guard's threshold", () => {
  it("is 15 %", () => {
    expect(THRESHOLD).toBe(0.15);
  });

  it("passes 14 % worse and fails 16 % worse, in both directions", () => {
    expect(judge(up, 1, 0.86)?.status).toBe("ok");
    expect(judge(up, 1, 0.84)?.status).toBe("worse");
    expect(judge(down, 1, 1.14)?.status).toBe("ok");
    expect(judge(down, 1, 1.16)?.status).toBe("worse");
    // Scaled baselines: the threshold is a fraction of the baseline, not an absolute step.
    expect(judge(up, 40, 34.4)?.status).toBe("ok");
    expect(judge(up, 40, 33.6)?.status).toBe("worse");
    expect(judge(down, 0.2, 0.228)?.status).toBe("ok");
    expect(judge(down, 0.2, 0.232)?.status).toBe("worse");
  });

  it("passes exactly at the limit ('more than 15 % worse' fails)", () => {
    expect(withinLimit("higher", 1, 0.85)).toBe(true);
    expect(withinLimit("lower", 1, 1.15)).toBe(true);
  });

  it("takes another threshold when given one", () => {
    expect(
      compare({ [up.name]: 1 }, { [up.name]: 0.93 }, { guarded: [up], threshold: 0.05 })[0]?.status,
    ).toBe("worse");
  });
});

suite("the guard's direction", () => {
  it("never fails a figure for getting better, however much", () => {
    expect(judge(up, 1, 3)?.status).toBe("ok");
    expect(judge(down, 1, 0.1)?.status).toBe("ok");
  });

  it("fails a higher-is-better figure that dropped, and a lower-is-better one that rose", () => {
    expect(judge(up, 1, 0.5)?.status).toBe("worse");
    expect(judge(down, 1, 1.5)?.status).toBe("worse");
  });

  it("says how much worse, signed by the direction", () => {
    expect(worseBy("higher", 2, 1.5)).toBeCloseTo(0.25);
    expect(worseBy("higher", 2, 2.5)).toBeCloseTo(-0.25);
    expect(worseBy("lower", 2, 2.5)).toBeCloseTo(0.25);
    expect(worseBy("lower", 2, 1.5)).toBeCloseTo(-0.25);
  });

  it("guards the issue's ratios, each in its direction", () => {
    const better = Object.fromEntries(GUARDED.map((g) => [g.name, g.better]));
    expect(better).toEqual({
      "peer.langgraph_ratio": "higher",
      "sqlite.engine_to_sql_replay_ratio": "higher",
      "sqlite.wal_pages_per_roundtrip": "lower",
      "sqlite.concurrent64_to_sequential_ratio": "higher",
      "postgres.engine_to_bare_ratio": "higher",
      "postgres.concurrent64_to_bare_ratio": "higher",
      "http.ops_to_bare_ratio_64_clients": "higher",
      "http.resume_p99_to_bare_ratio_64_clients": "lower",
      "langgraph.gate_to_interrupt_time_ratio": "lower",
      "mcp.proxy_to_direct_p50_ratio": "lower",
    });
  });
});

suite("what else fails", () => {
  it("a guarded figure the run did not print, or printed as no number", () => {
    const [missing] = compare({ [up.name]: 1 }, {}, { guarded: [up] });
    expect(missing?.status).toBe("not measured");
    expect(judge(up, 1, Number.NaN)?.status).toBe("not measured");
    expect(withinLimit("lower", 1, Number.NaN)).toBe(false);
  });

  it("a guarded figure the baseline does not hold", () => {
    const [v] = compare({}, { [up.name]: 1 }, { guarded: [up] });
    expect(v?.status).toBe("no baseline");
    expect(judge(up, 0, 1)?.status).toBe("no baseline");
  });

  it("passes only when every figure is ok", () => {
    const verdicts = compare(
      { [up.name]: 1, [down.name]: 1 },
      { [up.name]: 1, [down.name]: 2 },
      { guarded: [up, down] },
    );
    expect(verdicts.map((v) => v.status)).toEqual(["ok", "worse"]);
    expect(passed(verdicts)).toBe(false);
    expect(passed(verdicts.slice(0, 1))).toBe(true);
  });

  it("checks only the suites named, by the figure's prefix", () => {
    const other: Guarded = { name: "y.ratio", better: "higher" };
    const verdicts = compare(
      { [up.name]: 1, [other.name]: 1 },
      { [up.name]: 1 },
      {
        guarded: [up, other],
        suites: ["x"],
      },
    );
    expect(verdicts.map((v) => v.name)).toEqual([up.name]);
  });
});

suite("the guard's lines", () => {
  it("name the figure, the measured value and the baseline", () => {
    const v = judge(down, 25, 30);
    if (!v) throw new Error("no verdict");
    const line = describe(v);
    expect(line).toContain("FAIL");
    expect(line).toContain("x.down_ratio");
    expect(line).toContain("30");
    expect(line).toContain("baseline 25");
    expect(line).toContain("20.0 % worse");
    expect(line).toContain("lower is better");
  });
});

suite("the baseline's figures", () => {
  it("are the median of the runs, per figure", () => {
    const runs = [
      { [up.name]: 3, [down.name]: 10 },
      { [up.name]: 1, [down.name]: 30 },
      { [up.name]: 2, [down.name]: 20, "x.other": 5 },
    ];
    expect(medianFigures(runs, [up, down])).toEqual({ [up.name]: 2, [down.name]: 20 });
    expect(medianFigures(runs.slice(0, 2), [up])).toEqual({ [up.name]: 2 });
  });

  it("refuse a run that did not measure a guarded figure", () => {
    expect(() => medianFigures([{ [up.name]: 1 }, {}], [up])).toThrow(/run 2 .*x\.up_ratio/);
    expect(() => medianFigures([], [up])).toThrow();
  });

  it("keep the load each run printed", () => {
    const line = loadLine("sqlite, http", 111, { before: 7.84, after: 8.07, cores: 2 });
    expect(line).toBe(
      "guard: sqlite, http took 111 s; load average 7.84 before, 8.07 after (2 cores)",
    );
    expect(parseLoad(`{"name":"x","value":1,"unit":"ratio"}\n${line}\n`)).toEqual({
      before: 7.84,
      after: 8.07,
      cores: 2,
    });
    expect(parseLoad("no load here")).toBeUndefined();
  });

  it("are read from a run's output, skipping every line that is not a figure", () => {
    const out = [
      '{"name":"x.up_ratio","value":0.5,"unit":"ratio"}',
      "guard ok   x.up_ratio: 0.5 against baseline 0.5",
      '{"name":"x.nan","value":null,"unit":"ratio"}',
      "{not json",
      "",
    ].join("\n");
    expect(parseFigures(out)).toEqual({ "x.up_ratio": 0.5 });
  });
});

suite("the command line", () => {
  it("--check implies the short mode; suites are named", () => {
    expect(parseArgs(["--check", "sqlite"])).toMatchObject({
      check: true,
      quick: true,
      suites: ["sqlite"],
    });
    expect(parseArgs([])).toMatchObject({ check: false, quick: false, suites: [] });
  });

  it("--write-baseline --from takes saved runs and nothing else", () => {
    expect(parseArgs(["--write-baseline", "--from", "a", "b", "c"]).from).toEqual(["a", "b", "c"]);
    expect(() => parseArgs(["--from", "a"])).toThrow(/--write-baseline/);
    expect(() => parseArgs(["--write-baseline", "--from"])).toThrow(/saved runs/);
    expect(() => parseArgs(["--check", "--write-baseline", "--from", "a"])).toThrow();
    expect(() => parseArgs(["--chek"])).toThrow(/unknown option/);
  });
});
