import { defineConfig } from "vitest/config";
import { IntegrationFirst } from "./test/setup/sequencer.js";

const FILES = ["test/**/*.test.ts", "src/**/*.test.ts", "examples/**/*.test.ts"];
/** Files that start processes, PostgreSQL, Chromium or servers on loopback, or take seconds. */
const INTEGRATION = "**/*.int.test.ts";

export default defineConfig({
  test: {
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
    // `npm test` runs both; `npm run test:unit` the first alone (vitest --project unit).
    projects: [
      {
        extends: true,
        // In-process files share one module graph per worker (no isolation): importing the sources
        // again for every file was most of their time. None mocks modules; the leak check still
        // runs after each file.
        test: { name: "unit", include: FILES, exclude: [INTEGRATION], isolate: false },
      },
      {
        extends: true,
        // A bound for a hung test, not a speed check: with four files at a time on two cores, a
        // test that starts ten CLI processes in a row can take longer than 30 s on a busy machine.
        // Without isolation too (one module graph per worker): importing the engine, the server and
        // the adapters again for each file cost more CPU than most of these files' own tests (on
        // test/server and test/channels, 184 s of imports against 33 s, and half the wall time).
        // None mocks modules; a file that changes the process (cwd, env) restores it.
        test: {
          name: "int",
          include: [INTEGRATION],
          isolate: false,
          testTimeout: 90_000,
          hookTimeout: 90_000,
        },
      },
    ],
  },
});
