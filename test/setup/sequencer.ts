// The order vitest starts the test files in: the longest known files first (LONGEST, in its order),
// then the other integration files (*.int.test.ts), then the in-process files, which fill the
// workers at the end. Within each of the last two groups, vitest's own order (its recorded
// durations, longest first, when it has them; else the largest files first). Without this, a fresh
// checkout (no recorded durations) could start the longest file last, and the run would wait for it
// alone.
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** The longest files, longest first, as measured by a CI run on two cores (seconds): started
 * before every other file, so that none of them starts late and leaves the run waiting on it alone
 * at the end (the door contracts, 29-line files, came 207 s into a run by vitest's largest-first
 * order and made its tail). A file not listed keeps vitest's order after these. */
const LONGEST = [
  "test/doors/doors-postgres.int.test.ts", // 159
  "test/doors/doors-sqlite.int.test.ts", // 159
  "test/packaging/package-types.int.test.ts", // 91
  "test/inbox/inbox.browser.int.test.ts", // 87
  "test/inbox/decide.browser.int.test.ts", // 82
  "test/inbox/review-view.browser.int.test.ts", // 74
  "test/inbox/bulk.browser.int.test.ts", // 72
  "test/cli/cli.int.test.ts", // 71
  "test/store/sqlite-checkpointer.int.test.ts", // 65
  "test/cli/audit-verify-store.int.test.ts", // 62
  "test/inbox/demo-pages.browser.int.test.ts", // 61
  "test/cli/prune.int.test.ts", // 58
  "test/postgres/race.int.test.ts", // 54
  "test/mcp/server.int.test.ts", // 52
  "test/packaging/package.int.test.ts", // 50
  "test/store-contract/postgres.int.test.ts", // 47
];

export function isIntegration(file: string): boolean {
  return /\.int\.test\.tsx?$/.test(file);
}

function rank(file: string): number {
  const path = file.replaceAll("\\", "/");
  const known = LONGEST.findIndex((f) => path.endsWith(`/${f}`));
  if (known >= 0) return known;
  return isIntegration(path) ? LONGEST.length : LONGEST.length + 1;
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
