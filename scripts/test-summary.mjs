// Prints vitest's JSON report as one plain closing line: "N passed, N failed, N skipped".
import { readFileSync } from "node:fs";

const file = process.argv[2] ?? ".tmp/vitest-report.json";
try {
  const r = JSON.parse(readFileSync(file, "utf8"));
  const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  process.stdout.write(
    `${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped\n`,
  );
} catch (err) {
  process.stderr.write(`no test report at ${file}: ${err.message}\n`);
  process.exitCode = 1;
}
