import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

// Workspace packages export `./src/index.ts` under this condition, so tests and
// type checks run against sources without a build step in between.
const conditions = ["@tenantplane/source", ...defaultServerConditions];

/** The vitest configuration every package's unit tests share. */
export const unitTestConfig = defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  // Property tests run thousands of cases; under a loaded CI machine 5 s is not enough.
  test: { include: ["src/**/*.test.ts"], testTimeout: 60_000 },
});
