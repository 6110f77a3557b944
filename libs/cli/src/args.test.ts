import { describe, expect, it } from "vitest";
import { outputFlag, parseCommandLine, parseDuration } from "./args.js";
import { CliError } from "./cli-io.js";

describe("parseDuration", () => {
  it.each([
    ["30s", 30_000],
    ["10m", 600_000],
    ["1h30m", 5_400_000],
    ["2h", 7_200_000],
    ["1h2m3s", 3_723_000],
  ])("reads %s", (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(["", "10", "m", "1.5h", "10min", "-1m", "1m1h"])("refuses %j", (text) =>
    expect(parseDuration(text)).toBeUndefined(),
  );
});

describe("parseCommandLine", () => {
  it("adds -h/--help and keeps positionals", () => {
    const line = parseCommandLine("x", ["a", "--name", "n", "-h"], { name: { type: "string" } });
    expect(line).toEqual({ values: { name: "n", help: true }, positionals: ["a"], help: true });
  });

  it("turns an unknown flag into a usage error (exit 2) pointing at the command's help", () => {
    let error: unknown;
    try {
      parseCommandLine("get", ["--nope"], {});
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(2);
    expect((error as CliError).message).toMatch(
      /Unknown option '--nope'[\s\S]*Run 'tenantplane get --help' for usage\./,
    );
  });

  it("checks -o against the allowed formats, defaulting to the first", () => {
    const formats = ["table", "json"] as const;
    expect(outputFlag("d", parseCommandLine("d", [], { output: { type: "string", short: "o" } }), formats)).toBe(
      "table",
    );
    expect(
      outputFlag("d", parseCommandLine("d", ["-o", "json"], { output: { type: "string", short: "o" } }), formats),
    ).toBe("json");
    expect(() =>
      outputFlag("d", parseCommandLine("d", ["-o", "yaml"], { output: { type: "string", short: "o" } }), formats),
    ).toThrow(/-o yaml: use one of table, json/);
  });
});
