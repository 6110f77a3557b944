import { accessSync, constants, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const packageDir = new URL("../", import.meta.url);
const read = (url: URL) => JSON.parse(readFileSync(url, "utf8")) as Record<string, unknown>;

describe("the tenantplane bin", () => {
  const bin = (read(new URL("package.json", packageDir))["bin"] ?? {}) as Record<string, string>;
  const target = bin["tenantplane"] ?? "";

  it("points at a committed, executable file, so npm ci links it before anything is built", () => {
    // npm ci skips a bin whose target is missing, and dist/ exists only after the build.
    expect(target).not.toMatch(/^(\.\/)?dist\//);
    const file = fileURLToPath(new URL(target, packageDir));
    expect(() => accessSync(file, constants.X_OK)).not.toThrow();
    const source = readFileSync(file, "utf8");
    expect(source.startsWith("#!/usr/bin/env node\n")).toBe(true);
    expect(source).toContain('import("../dist/main.js")');
  });

  it("is recorded the same way in the lockfile npm ci installs from", () => {
    const lock = read(new URL("../../package-lock.json", packageDir)) as {
      packages: Record<string, { bin?: Record<string, string> }>;
    };
    expect(lock.packages["libs/cli"]?.bin?.["tenantplane"]).toBe(target.replace(/^\.\//, ""));
  });
});
