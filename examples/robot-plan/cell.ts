// The robot cell of pattern 2: its named locations, its tools, and the sequence builder that turns an
// intent ("tack weld at positions 1 and 2") into numbered plan steps.
import type { RobotIntent } from "../planner/index.js";

export interface PlanStep {
  id: number;
  action: "move" | "attach" | "routine";
  /** A location for moves, a tool for attach, a routine name for routines. */
  target: string;
  name: string;
  /** For routines: where it runs. */
  position?: string;
  /** For routines: seconds to settle before the routine. */
  stabilize?: number;
  /** For routines: the check run after it. */
  verify?: string;
}

export const CELL_POSITIONS: readonly number[] = [1, 2, 3];

export const TOOL_FOR_TASK = {
  tack_weld: "Welder",
  inspect: "Camera",
} as const satisfies Record<RobotIntent["task"], string>;

const TOOL_STATION = { Welder: "Tool_Weld", Camera: "Tool_Camera" } as const;

export function positionName(n: number): string {
  return `Pos_${n}`;
}

/** Every location a move may target. */
export function cellLocations(positions: readonly number[] = CELL_POSITIONS): Set<string> {
  const out = new Set<string>(["Home"]);
  for (const station of Object.values(TOOL_STATION)) {
    out.add(`${station}_Safe_Position`);
    out.add(`${station}_Position`);
  }
  for (const p of positions) {
    out.add(positionName(p));
    out.add(`Safe_Pos_${p}`);
  }
  return out;
}

/** Tool change first, then for each position: approach from its safe point, run the routine, back
 * off; the arm returns Home between positions and at the end. */
export function buildPlan(intent: RobotIntent): PlanStep[] {
  const tool = TOOL_FOR_TASK[intent.task];
  const station = TOOL_STATION[tool];
  const steps: Omit<PlanStep, "id">[] = [];
  const move = (target: string) =>
    steps.push({ action: "move", target, name: `Move to ${target}` });
  move(`${station}_Safe_Position`);
  move(`${station}_Position`);
  steps.push({ action: "attach", target: tool, name: `Attach ${tool}` });
  move(`${station}_Safe_Position`);
  intent.positions.forEach((n, i) => {
    const pos = positionName(n);
    if (i > 0) move("Home");
    move(`Safe_Pos_${n}`);
    move(pos);
    steps.push(
      intent.task === "tack_weld"
        ? {
            action: "routine",
            target: "tack_weld",
            position: pos,
            name: `Tack Weld at ${pos}`,
            stabilize: 1.5,
            verify: "weld_quality_check",
          }
        : {
            action: "routine",
            target: "inspect",
            position: pos,
            name: `Inspect ${pos}`,
            stabilize: 0.5,
            verify: "image_sharpness_check",
          },
    );
    move(`Safe_Pos_${n}`);
  });
  move("Home");
  return steps.map((s, i) => ({ id: i + 1, ...s }));
}
