import { defineConfig } from "vitest/config";
import path from "node:path";
import { fileURLToPath } from "node:url";

const alias = { "@": path.dirname(fileURLToPath(import.meta.url)) };
// kafkajs 2.2.4 schedules a timer of about -Date.now() ms (tulios/kafkajs#1751, unfixed upstream), which
// Node 23+ reports on every client; the delay was always clamped to 1 ms. scripts/lib/stack.ts
// silences it the same way for the stack's processes.
const execArgv = ["--disable-warning=TimeoutNegativeWarning"];

export default defineConfig({
  resolve: { alias },
  test: {
    projects: [
      {
        resolve: { alias },
        // Some unit tests use a real Redis or import every route module: vitest's 5 s default was
        // passed on a machine as busy as CI may be (2 cores, another run beside). They wait on
        // conditions, so a quiet run is not slower.
        test: { name: "unit", include: ["tests/unit/**/*.test.ts"], environment: "node", testTimeout: 30_000 },
      },
      {
        resolve: { alias },
        test: {
          name: "integration",
          include: ["tests/integration/**/*.test.ts"],
          environment: "node",
          globalSetup: ["tests/integration/global-setup.ts"],
          execArgv,
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        resolve: { alias },
        test: {
          name: "faults",
          include: ["tests/faults/**/*.test.ts"],
          environment: "node",
          globalSetup: ["tests/faults/global-setup.ts"],
          execArgv,
          testTimeout: 300_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
