import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

// Workspace packages are imported from source under this condition, as in the unit tests.
const conditions = ["@tenantplane/source", ...defaultServerConditions];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    // The demo's pure parts have their unit tests beside them.
    include: ["suites/**/*.test.ts", "demo/**/*.test.ts"],
    globalSetup: ["./global-setup.ts"],
    // Each suite file runs its own servers; one file at a time keeps a 2-core machine responsive.
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 180_000,
    teardownTimeout: 60_000,
  },
});
