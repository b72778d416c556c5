// Prints the closing line of a CI run in pytest's format, counting every test of both suites:
// "===== N passed, N skipped in S.SSs =====" ("N failed" first when any failed), from vitest's JSON
// report and, when given and present, pytest's JUnit XML report. A missing vitest report is an error.
import { existsSync, readFileSync } from "node:fs";

const [vitestFile = ".tmp/vitest-report.json", pytestFile] = process.argv.slice(2);
const totals = { passed: 0, failed: 0, skipped: 0, seconds: 0 };

try {
  const r = JSON.parse(readFileSync(vitestFile, "utf8"));
  totals.passed += r.numPassedTests ?? 0;
  totals.failed += r.numFailedTests ?? 0;
  totals.skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  const ends = (r.testResults ?? []).map((t) => t.endTime ?? 0);
  if (r.startTime && ends.length) totals.seconds += (Math.max(...ends) - r.startTime) / 1000;
} catch (err) {
  process.stderr.write(`no test report at ${vitestFile}: ${err.message}\n`);
  process.exitCode = 1;
}

if (pytestFile) {
  if (!existsSync(pytestFile)) {
    process.stderr.write(`no pytest report at ${pytestFile}\n`);
    process.exitCode = 1;
  } else {
    // <testsuite name="pytest" errors="0" failures="0" skipped="0" tests="33" time="12.3" ...>
    const xml = readFileSync(pytestFile, "utf8");
    const suite = /<testsuite\b([^>]*)>/.exec(xml)?.[1] ?? "";
    const attr = (name) => Number(new RegExp(`\\b${name}="([\\d.]+)"`).exec(suite)?.[1] ?? 0);
    const failed = attr("failures") + attr("errors");
    const skipped = attr("skipped");
    totals.failed += failed;
    totals.skipped += skipped;
    totals.passed += attr("tests") - failed - skipped;
    totals.seconds += attr("time");
  }
}

const parts = [];
if (totals.failed) parts.push(`${totals.failed} failed`);
parts.push(`${totals.passed} passed`);
if (totals.skipped) parts.push(`${totals.skipped} skipped`);
process.stdout.write(`===== ${parts.join(", ")} in ${totals.seconds.toFixed(2)}s =====\n`);
if (totals.failed) process.exitCode = 1;
