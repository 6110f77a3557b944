import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

// Workspace packages are imported from source under this condition, as in the unit tests.
const conditions = ["@tenantplane/source", ...defaultServerConditions];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ["suites/**/*.test.ts"],
    // The three-node NATS fault suite was seen failing when a node died at start on a loaded
    // machine, which is not understood yet: it runs on request (`npm run test:nats-cluster`
    // in test/), not in every run, until it is.
    exclude: process.env.NATS_CLUSTER_SUITE === "1" ? [] : ["suites/nats-cluster.test.ts"],
    globalSetup: ["./global-setup.ts"],
    // Each suite file runs its own servers; one file at a time keeps a 2-core machine responsive.
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 180_000,
    teardownTimeout: 60_000,
  },
});
