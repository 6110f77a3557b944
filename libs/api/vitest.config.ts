import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { conditions: ["@tenantplane/source"] },
  test: { include: ["src/**/*.test.ts"] },
});
