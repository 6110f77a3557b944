import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.js";

describe("logger redaction", () => {
  it("never prints kubeconfigs, tokens or secret data", () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const log = createLogger("test", "info", sink);
    log.info({ kubeconfig: "apiVersion: v1 secret-kc", secret: { data: { token: "s3cr3t" } } }, "x");
    log.info({ creds: { token: "t0ken", keyPem: "-----BEGIN" } }, "y");
    const out = lines.join("");
    expect(out).not.toContain("secret-kc");
    expect(out).not.toContain("s3cr3t");
    expect(out).not.toContain("t0ken");
    expect(out).not.toContain("BEGIN");
    expect(out).toContain("[redacted]");
  });
});
