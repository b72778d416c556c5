// The verifier that runs after a human approved a plan: checks it against the cell's constraints
// before anything moves. An approval never excuses a plan the cell cannot run safely.
import { cellLocations, type PlanStep, TOOL_FOR_TASK } from "./cell.js";

export interface Verification {
  ok: boolean;
  errors: string[];
}

const ROUTINE_TOOL: Record<string, string> = TOOL_FOR_TASK;

export function verifyPlan(
  plan: readonly PlanStep[],
  locations: ReadonlySet<string> = cellLocations(),
): Verification {
  const errors: string[] = [];
  if (plan.length === 0) errors.push("the plan has no steps");
  let attached: string | undefined;
  plan.forEach((step, i) => {
    const where = `step ${step.id} (${step.name})`;
    if (step.action === "move" && !locations.has(step.target)) {
      errors.push(`${where}: ${step.target} is not a location of this cell`);
    }
    if (step.action === "attach") attached = step.target;
    if (step.action === "routine") {
      const before = plan[i - 1];
      if (!step.position || !locations.has(step.position)) {
        errors.push(`${where}: position ${step.position ?? "(none)"} does not exist`);
      } else if (before?.action !== "move" || before.target !== step.position) {
        errors.push(`${where}: must come right after a move to ${step.position}`);
      }
      const needs = ROUTINE_TOOL[step.target];
      if (!needs) errors.push(`${where}: unknown routine ${step.target}`);
      else if (attached !== needs) {
        errors.push(`${where}: needs the ${needs} attached, but ${attached ?? "no tool"} is`);
      }
    }
  });
  const last = plan[plan.length - 1];
  if (last && !(last.action === "move" && last.target === "Home")) {
    errors.push("the plan must end with the arm at Home");
  }
  return { ok: errors.length === 0, errors };
}
