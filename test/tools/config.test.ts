import { describe, expect, it } from "vitest";
import { isAirlockError } from "../../src/core/errors.js";
import { HITL_DEFAULTS, type HitlConfig, resolveHitlConfig } from "../../src/tools/config.js";
import { getHitlConfig, hitlTool } from "../../src/tools/hitl-tool.js";

const tool = async (args: { x: number }) => args.x;

function errorOf(config: HitlConfig, name = "tool"): Error & { field?: string } {
  try {
    resolveHitlConfig(config, name);
  } catch (err) {
    expect(isAirlockError(err, "invalid_input")).toBe(true);
    return err as Error & { field?: string };
  }
  throw new Error("expected the configuration to be refused");
}

describe("HitlConfig", () => {
  it("has the seed's defaults", () => {
    const c = getHitlConfig(hitlTool(tool, {}));
    expect(c).toMatchObject({
      name: "tool",
      autoThreshold: 85,
      quickThreshold: 60,
      approvalType: "general",
      riskLevel: "medium",
      requiresReason: false,
      approveLabel: "Approve",
      rejectLabel: "Reject",
      descriptionTemplate: undefined,
      blocking: false,
      requester: "agent",
      action: "tool",
    });
    expect(HITL_DEFAULTS.autoThreshold).toBe(85);
    expect(Object.isFrozen(c)).toBe(true);
  });

  it.each([
    [
      { autoThreshold: 150 },
      "Expected `autoThreshold` to be a number from 0 to 100, got `150` (number)",
    ],
    [
      { quickThreshold: -1 },
      "Expected `quickThreshold` to be a number from 0 to 100, got `-1` (number)",
    ],
    [
      { autoThreshold: Number.NaN },
      "Expected `autoThreshold` to be a number from 0 to 100, got `NaN` (number)",
    ],
    [
      { autoThreshold: "90" as unknown as number },
      "Expected `autoThreshold` to be a number from 0 to 100, got `90` (string)",
    ],
    [
      { riskLevel: "extreme" as never },
      'Expected `riskLevel` to be one of "low", "medium", "high", "critical", got `extreme` (string)',
    ],
    [{ timeoutMs: 0 }, "Expected `timeoutMs` to be an integer from 1 and up, got `0` (number)"],
    [
      { approvers: ["ok", ""] },
      'Expected `approvers` to be an array of non-empty strings, got `["ok",""]` (array)',
    ],
    [
      { requiresReason: "yes" as unknown as boolean },
      "Expected `requiresReason` to be a boolean, got `yes` (string)",
    ],
    [{ approveLabel: " " }, "Expected `approveLabel` to be a non-empty string, got ` ` (string)"],
  ])("refuses %j, naming the option, what was expected and what came", (config, message) => {
    expect(errorOf(config).message).toBe(message);
  });

  it("enforces autoThreshold >= quickThreshold (equal is fine)", () => {
    const err = errorOf({ autoThreshold: 60, quickThreshold: 70 });
    expect(err.message).toBe(
      "Expected `autoThreshold` to be at least `quickThreshold` (70), got `60`",
    );
    expect(err.field).toBe("autoThreshold");
    expect(resolveHitlConfig({ autoThreshold: 70, quickThreshold: 70 }, "t").autoThreshold).toBe(
      70,
    );
  });

  it("lets a default threshold yield to an explicit one", () => {
    // The seed's `auto_threshold=50` keeps working: quick follows it down.
    const low = resolveHitlConfig({ autoThreshold: 50 }, "t");
    expect([low.autoThreshold, low.quickThreshold]).toEqual([50, 50]);
    const high = resolveHitlConfig({ quickThreshold: 90 }, "t");
    expect([high.autoThreshold, high.quickThreshold]).toEqual([90, 90]);
    const untouched = resolveHitlConfig({ autoThreshold: 95 }, "t");
    expect([untouched.autoThreshold, untouched.quickThreshold]).toEqual([95, 60]);
  });

  it("accepts the bounds 0 and 100", () => {
    const c = resolveHitlConfig({ autoThreshold: 100, quickThreshold: 0 }, "t");
    expect([c.autoThreshold, c.quickThreshold]).toEqual([100, 0]);
  });

  it("refuses unknown options (a typo would silently change nothing)", () => {
    const err = errorOf({ autoTreshold: 90 } as HitlConfig);
    expect(err.message).toContain("Unknown option `autoTreshold`");
  });

  it("needs a name for an anonymous function", () => {
    expect(errorOf({}, "").message).toContain("Expected `name` to be a non-empty string");
    expect(resolveHitlConfig({ name: "named" }, "").name).toBe("named");
  });

  it("needs a gate to block on", () => {
    expect(errorOf({ blocking: true }).message).toBe(
      "Expected `airlock` to be an Airlock engine or client when `blocking` is true, got `undefined` (undefined)",
    );
    expect(errorOf({ airlock: {} as never }).message).toContain(
      "Expected `airlock` to be an Airlock",
    );
  });

  it("validates when wrapping, before any call", () => {
    expect(() => hitlTool(tool, { autoThreshold: 101 })).toThrow(/autoThreshold/);
    expect(() => hitlTool(42 as never, {})).toThrow("Expected `fn` to be a function");
  });
});
