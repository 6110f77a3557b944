import type { Decision } from "@tenantplane/messaging";
import { describe, expect, it } from "vitest";
import { runCli } from "./cli.js";
import { decisionSubject, parseDecisionsArgs, readDecision } from "./decisions.js";
import { followHeader, followLine, formatDecisionJson, formatDecisionTable } from "./decisions-format.js";
import { memoryIo } from "./memory-io.js";

const NOW = new Date("2026-05-01T12:00:00.000Z");
const parse = (...args: string[]) => parseDecisionsArgs(args, { NATS_URL: "nats://env:4222" }, NOW);

const decision: Decision = {
  id: "0f0e0d0c-0000-0000-0000-000000000001",
  time: "2026-05-01T11:59:58.123Z",
  tenant: "dev",
  service: "sync-worker",
  action: "Delete",
  kind: "ConfigMap",
  tenantRef: { namespace: "shop", name: "old" },
  hostRef: { namespace: "tp-dev", name: "old-x-shop-x-dev" },
  reason: "source ConfigMap shop/old is gone",
};

describe("decisions command line", () => {
  it("builds the subject filter from tenant, kind and action, wildcarding what is unset", () => {
    expect(decisionSubject({})).toBe("tenantplane.decisions.*.*.*");
    expect(parse()).toEqual({
      subject: "tenantplane.decisions.*.*.*",
      since: undefined,
      follow: false,
      output: "table",
      natsUrl: "nats://env:4222",
    });
    expect(parse("--tenant", "dev", "--kind", "cm", "--action", "delete")).toMatchObject({
      subject: "tenantplane.decisions.dev.ConfigMap.Delete",
    });
    expect(parse("--kind", "PersistentVolumeClaims")).toMatchObject({
      subject: "tenantplane.decisions.*.PersistentVolumeClaim.*",
    });
    expect(parse("--kind", "StatefulSet")).toMatchObject({ subject: "tenantplane.decisions.*.StatefulSet.*" });
  });

  it("turns --since into a start time, takes --follow/-f, -o json and --nats-url over NATS_URL", () => {
    expect(parse("--since", "10m", "-f", "-o", "json", "--nats-url", "nats://flag:4222")).toMatchObject({
      since: "2026-05-01T11:50:00.000Z",
      follow: true,
      output: "json",
      natsUrl: "nats://flag:4222",
    });
    expect(parseDecisionsArgs([], {}, NOW)).toMatchObject({ natsUrl: undefined });
    expect(parse("--since", "99999999999h")).toMatchObject({ since: "1970-01-01T00:00:00.000Z" });
  });

  it.each([
    [["--tenant", "Bad_Name"], 1, '--tenant "Bad_Name": a tenant name must be'],
    [["--kind", "deploy.ments"], 1, '--kind "deploy.ments": use a Kind such as Pod (pods, po)'],
    [["--kind", "*"], 1, '--kind "*": use a Kind'],
    [["--action", "Patch"], 1, '--action "Patch": use one of Create, Update, Delete, Skip'],
    [["--since", "ten minutes"], 1, '--since "ten minutes": use a duration'],
    [["-o", "yaml"], 2, "-o yaml: use one of table, json"],
    [["stray"], 2, "Unexpected argument 'stray'"],
  ])("refuses %j with exit %i naming the field", async (args, code, message) => {
    const { io, out } = memoryIo({ env: { NATS_URL: "nats://127.0.0.1:1" } });
    expect(await runCli(["decisions", ...args], io)).toBe(code);
    expect(out.stderr).toContain(message);
  });

  it("without --nats-url or NATS_URL is a usage error saying what to set", async () => {
    const { io, out } = memoryIo({ env: {} });
    expect(await runCli(["decisions"], io)).toBe(2);
    expect(out.stderr).toContain("no NATS server: pass --nats-url or set NATS_URL");
  });

  it("prints help with examples and exit codes", async () => {
    const { io, out } = memoryIo();
    expect(await runCli(["decisions", "--help"], io)).toBe(0);
    expect(out.stdout).toMatch(/^Usage: tenantplane decisions /);
    expect(out.stdout).toContain("Examples:\n  tenantplane decisions --tenant payments-dev --since 10m");
    expect(out.stdout).toMatch(/3 the host cluster, a tenant API or NATS cannot be reached/);
  });
});

describe("decisions output", () => {
  it("reads a message as a Decision or says why it is not one", () => {
    const bytes = (text: string) => new TextEncoder().encode(text);
    expect(readDecision(bytes(JSON.stringify(decision)))).toEqual({ decision });
    expect(readDecision(bytes("{"))).toEqual({ problem: "not JSON" });
    expect(readDecision(bytes(JSON.stringify({ ...decision, action: "Patch" })))).toMatchObject({
      problem: expect.stringMatching(/^not a Decision \(action: /),
    });
  });

  it("prints a table, JSON lines, and fixed-width follow lines", () => {
    expect(formatDecisionTable([decision])).toBe(
      [
        "TIME                  TENANT  ACTION  KIND       HOST                     VIRTUAL   SERVICE      REASON",
        "2026-05-01T11:59:58Z  dev     Delete  ConfigMap  tp-dev/old-x-shop-x-dev  shop/old  sync-worker  source ConfigMap shop/old is gone",
        "",
      ].join("\n"),
    );
    expect(JSON.parse(formatDecisionJson(decision))).toEqual(decision);
    expect(formatDecisionJson(decision).split("\n")).toHaveLength(2);
    const header = followHeader();
    const line = followLine(decision);
    expect(header.indexOf("REASON")).toBe(line.indexOf("source ConfigMap"));
    expect(followLine(decision, { color: true })).toContain("\u001b[31mDelete");
    expect(line).not.toContain("\u001b[");
  });
});
