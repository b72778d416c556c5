import { defineConfig } from "vitest/config";
import { IntegrationFirst } from "./test/setup/sequencer.js";

export default defineConfig({
  test: {
    // *.int.test.ts start processes, PostgreSQL, Chromium or servers on loopback, or take seconds;
    // `npm run test:unit` leaves them out (--exclude), `npm test` runs everything.
    include: ["test/**/*.test.ts", "src/**/*.test.ts", "examples/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Most of the suite waits on child processes, PostgreSQL and sockets rather than computing: four
    // files at a time finish much sooner than vitest's default (one per core but one, so a single
    // file at a time on two cores).
    maxWorkers: 4,
    sequence: { sequencer: IntegrationFirst },
    // After each file: fails it when an engine's store, a pool, a server or a child is left open.
    setupFiles: ["test/setup/leaks.ts"],
    // The JSON report feeds the plain "N passed, N failed" line that .ci/run prints at the end.
    reporters: ["default", ["json", { outputFile: ".tmp/vitest-report.json" }]],
  },
});
