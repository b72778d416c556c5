import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts", "examples/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // After each file: fails it when an engine's store, a pool, a server or a child is left open.
    setupFiles: ["test/setup/leaks.ts"],
    // The JSON report feeds the plain "N passed, N failed" line that .ci/run prints at the end.
    reporters: ["default", ["json", { outputFile: ".tmp/vitest-report.json" }]],
  },
});
