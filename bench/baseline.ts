// bench/baseline.json: the guarded ratios `npm run bench -- --check` compares a run with (check.ts).
// Written only on purpose, by --write-baseline, from the runs whose figures go in the change's note.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { GUARDED, type RunLoad, THRESHOLD } from "./check.js";

export const BASELINE_PATH = fileURLToPath(new URL("./baseline.json", import.meta.url));

export interface Baseline {
  comment: string;
  /** When it was written (a date, for the reader). */
  written: string;
  /** How many `--check` runs its figures are the median of, and the machine's load in each (null
   * when a run's output did not say). */
  runs: number;
  loads?: (RunLoad | null)[];
  /** The threshold and each guarded figure's direction, for the reader: the check takes both from
   * check.ts. */
  threshold: number;
  better: Record<string, string>;
  figures: Record<string, number>;
}

const COMMENT =
  "Written by `npm run bench -- --check --write-baseline` (one run) or `npm run bench -- " +
  "--write-baseline --from RUN…` (the median of saved --check outputs), only on purpose: when a " +
  "change moves a ratio for a reason its note gives, with the runs' figures and the machine's load " +
  "in that note. Never edited to make the check pass. `npm run bench -- --check` fails when a " +
  "figure is more than `threshold` worse than here, in the direction `better` names.";

export function readBaseline(path = BASELINE_PATH): Baseline | undefined {
  if (!existsSync(path)) return undefined;
  return JSON.parse(readFileSync(path, "utf8")) as Baseline;
}

export function writeBaseline(
  figures: Record<string, number>,
  loads: readonly (RunLoad | undefined)[],
  path = BASELINE_PATH,
): Baseline {
  const rounded: Record<string, number> = {};
  for (const [name, value] of Object.entries(figures)) {
    rounded[name] = Math.round(value * 1000) / 1000;
  }
  const baseline: Baseline = {
    comment: COMMENT,
    written: new Date().toISOString().slice(0, 10),
    runs: loads.length,
    loads: loads.map((l) => l ?? null),
    threshold: THRESHOLD,
    better: Object.fromEntries(GUARDED.map((g) => [g.name, g.better])),
    figures: rounded,
  };
  writeFileSync(path, `${JSON.stringify(baseline, null, 2)}\n`);
  return baseline;
}
