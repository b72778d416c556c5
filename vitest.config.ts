import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts", "examples/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // The JSON report feeds the plain "N passed, N failed" line that .ci/run prints at the end.
    reporters: ["default", ["json", { outputFile: ".tmp/vitest-report.json" }]],
  },
});
