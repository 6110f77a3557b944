import { describe, expect, it } from "vitest";
import { runCli } from "./cli.js";
import { parseHashKeySecret } from "./hash-key.js";
import { memoryIo } from "./memory-io.js";

describe("--hash-key-secret", () => {
  it("reads <namespace>/<name>[/<key>], the key defaulting to hash-key", () => {
    expect(parseHashKeySecret("tenantplane-system/tp-sync")).toEqual({
      namespace: "tenantplane-system",
      name: "tp-sync",
      key: "hash-key",
    });
    expect(parseHashKeySecret("ns/s/k")).toEqual({ namespace: "ns", name: "s", key: "k" });
  });

  it.each(["ns", "ns/", "/s", "ns/s/", "a/b/c/d"])("refuses %j before contacting anything (exit 2)", async (ref) => {
    for (const argv of [
      ["explain-sync", "--tenant", "dev", "-f", "m.yaml", "--hash-key-secret", ref],
      ["explain", "cm/x", "-n", "tp-dev", "--hash-key-secret", ref],
    ]) {
      const { io, out } = memoryIo({ files: { "m.yaml": "" } });
      expect(await runCli(argv, io)).toBe(2);
      expect(out.stderr).toContain(`--hash-key-secret ${ref}: use <namespace>/<name>[/<key>]`);
    }
  });
});
