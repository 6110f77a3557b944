import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

// Workspace packages export `./src/index.ts` under this condition, so tests and
// type checks run against sources without a build step in between.
const conditions = ["@tenantplane/source", ...defaultServerConditions];

/** The vitest configuration every package's unit tests share. */
export const unitTestConfig = defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: { include: ["src/**/*.test.ts"] },
});
