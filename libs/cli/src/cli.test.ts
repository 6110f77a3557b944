import { describe, expect, it } from "vitest";
import { runCli } from "./cli.js";
import { type CliIo, colorEnabled } from "./cli-io.js";

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
    expect(await runCli(["explian"], io)).toBe(2);
    expect(out.stderr).toMatch(/^tenantplane: unknown command "explian"/);
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

describe("unreachable servers", () => {
  it("an unreachable error no command mapped is still exit 3", async () => {
    const { io, out } = fakeIo(async () => {
      throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });
    });
    expect(
      await runCli(["explain-sync", "--offline", "--tenant", "dev", "-f", "x"], {
        ...io,
        readFile: async () => "kind: ConfigMap\n",
        stdout: () => {
          throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });
        },
      }),
    ).toBe(3);
    expect(out.stderr).toBe(
      "tenantplane explain-sync: cannot reach a server: connect ECONNREFUSED 127.0.0.1:1; check --kubeconfig, --context and --nats-url\n",
    );
  });
});

describe("every command", () => {
  it.each(["explain-sync", "explain", "decisions", "kubeconfig", "join-command", "get", "create"])(
    "%s --help shows usage, examples and exit codes",
    async (command) => {
      const { io, out } = fakeIo();
      expect(await runCli([command, "--help"], io)).toBe(0);
      expect(out.stdout).toMatch(new RegExp(`^Usage: tenantplane ${command}`));
      expect(out.stdout).toMatch(/\nExamples:\n {2}(tenantplane|kubectl) /);
      expect(out.stdout).toMatch(/Exit status: 0 /);
      expect(out.stdout).toMatch(/ 3 the host/);
    },
  );

  it("the top-level help lists every command and the exit codes", async () => {
    const { io, out } = fakeIo();
    await runCli(["--help"], io);
    for (const command of [
      "explain-sync",
      "explain ",
      "decisions",
      "kubeconfig",
      "join-command",
      "get tenants",
      "create tenant",
    ]) {
      expect(out.stdout).toContain(`  ${command}`);
    }
    expect(out.stdout).toContain("kubectl tenantplane <command>");
    expect(out.stdout).toContain("2 invalid command line; 3 the host cluster, a tenant API or NATS cannot be reached");
  });

  it("colours tables only when the io says stdout is a colour terminal", async () => {
    const manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: b}\n";
    const argv = ["explain-sync", "--offline", "--tenant", "dev", "-f", "m.yaml"];
    const plain = fakeIo(async () => manifest);
    await runCli(argv, plain.io);
    expect(plain.out.stdout).not.toContain("\u001b[");
    const coloured = fakeIo(async () => manifest);
    await runCli(argv, { ...coloured.io, color: true });
    expect(coloured.out.stdout).toContain("\u001b[32mCreate");
  });
});

describe("colorEnabled", () => {
  it("colours a terminal unless NO_COLOR is set, and never a pipe", () => {
    expect(colorEnabled(true, {})).toBe(true);
    expect(colorEnabled(true, { NO_COLOR: "" })).toBe(true);
    expect(colorEnabled(true, { NO_COLOR: "1" })).toBe(false);
    expect(colorEnabled(false, {})).toBe(false);
  });
});
