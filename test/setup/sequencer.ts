// The order vitest starts the test files in: integration files (*.int.test.ts) first, the longest
// known ones before the others, then the in-process files, which fill the workers at the end. Within
// each group, vitest's own order (its recorded durations, longest first, when it has them; else the
// largest files first). Without this, a fresh checkout (no recorded durations) could start the
// longest file last, and the run would wait for it alone.
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Where the longest files live (a minute or more each on two cores), started before the rest. */
const LONGEST = ["test/doors/", "test/packaging/", "test/cli/", "test/server/cli", "test/mcp/"];

export function isIntegration(file: string): boolean {
  return /\.int\.test\.tsx?$/.test(file);
}

function rank(file: string): number {
  const path = file.replaceAll("\\", "/");
  if (!isIntegration(path)) return 2;
  return LONGEST.some((prefix) => path.includes(`/${prefix}`)) ? 0 : 1;
}

export class IntegrationFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // Array.prototype.sort is stable: vitest's order stays within each rank.
    return sorted
      .map((spec, i) => ({ spec, i, rank: rank(spec.moduleId) }))
      .sort((a, b) => a.rank - b.rank || a.i - b.i)
      .map(({ spec }) => spec);
  }
}
