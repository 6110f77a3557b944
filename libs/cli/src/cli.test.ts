import { describe, expect, it } from "vitest";
import { runCli } from "./cli.js";
import type { CliIo } from "./cli-io.js";

function fakeIo(readFile: CliIo["readFile"] = async () => "") {
  const out = { stdout: "", stderr: "" };
  const io: CliIo = {
    stdout: (text) => void (out.stdout += text),
    stderr: (text) => void (out.stderr += text),
    readFile,
    now: () => new Date(0),
  };
  return { io, out };
}

describe("runCli", () => {
  it("prints help with exit 0 when asked, and with exit 2 when no command is given", async () => {
    for (const [argv, code] of [
      [["--help"], 0],
      [["help"], 0],
      [[], 2],
    ] as const) {
      const { io, out } = fakeIo();
      expect(await runCli(argv, io)).toBe(code);
      expect(out.stdout).toMatch(/^Usage: tenantplane <command>/);
    }
  });

  it("rejects an unknown command with exit 2", async () => {
    const { io, out } = fakeIo();
    expect(await runCli(["explain"], io)).toBe(2);
    expect(out.stderr).toMatch(/^tenantplane: unknown command "explain"/);
  });

  it("reports errors that are not the user's as one line with exit 1", async () => {
    const { io } = fakeIo(async () => {
      throw new Error("boom");
    });
    const argv = ["explain-sync", "--offline", "--tenant", "dev", "-f", "x"];
    // A read failure is the user's (exit 1); a failing stdout is a bug, surfaced without a stack.
    expect(await runCli(argv, io)).toBe(1);
    let stderr = "";
    const broken: CliIo = {
      ...io,
      readFile: async () => "kind: ConfigMap\n",
      stdout: () => {
        throw new TypeError("closed");
      },
      stderr: (text) => void (stderr += text),
    };
    expect(await runCli(argv, broken)).toBe(1);
    expect(stderr).toBe("tenantplane explain-sync: unexpected error: closed\n");
    stderr = "";
    expect(await runCli(argv, { ...broken, debug: true })).toBe(1);
    expect(stderr).toMatch(/^tenantplane explain-sync: unexpected error: TypeError: closed\n +at /);
  });
});
