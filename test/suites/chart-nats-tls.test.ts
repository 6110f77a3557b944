import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectNats, type NatsOptions } from "@tenantplane/messaging";
import { CommonEnvSchema, parseEnv } from "@tenantplane/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canConnect, freePort, generateCa, stablePort, signLeaf, toolPath, waitFor } from "../harness/index.js";

/**
 * The chart's NATS TLS values become NATS_TLS_* files; this suite proves the services'
 * connection honours them against a real nats-server that requires verified client
 * certificates, and that a comma-separated NATS_URL reaches a live member past a dead one.
 */
describe("NATS over mutual TLS, as the chart configures it", () => {
  const dir = mkdtempSync(join(tmpdir(), "tenantplane-nats-tls-"));
  let server: ChildProcess | undefined;
  let port = 0;
  const file = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content, { mode: 0o600 });
    return path;
  };
  const files = { ca: "", cert: "", key: "", otherCa: "" };

  beforeAll(async () => {
    const ca = await generateCa("nats-test-ca");
    // The client verifies 127.0.0.1 under the name "localhost".
    const serverLeaf = await signLeaf(ca, {
      commonName: "nats",
      dnsNames: ["localhost"],
      ipAddresses: ["127.0.0.1"],
      usage: "server",
    });
    const client = await signLeaf(ca, { commonName: "tenantplane", usage: "client" });
    files.ca = file("ca.crt", ca.certPem);
    files.cert = file("tls.crt", client.certPem);
    files.key = file("tls.key", client.keyPem);
    files.otherCa = file("other-ca.crt", (await generateCa("someone-else")).certPem);
    port = await stablePort();
    server = spawn(
      toolPath("nats-server"),
      [
        "-a",
        "127.0.0.1",
        "-p",
        String(port),
        "--tls",
        "--tlscert",
        file("server.crt", serverLeaf.certPem),
        "--tlskey",
        file("server.key", serverLeaf.keyPem),
        "--tlscacert",
        files.ca,
        "--tlsverify",
      ],
      { stdio: "ignore" },
    );
    await waitFor(async () => canConnect("127.0.0.1", port), {
      description: "nats-server with TLS to listen",
      timeoutMs: 20_000,
    });
  });

  afterAll(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server?.once("exit", resolve));
      server.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  /** NatsOptions exactly as a service builds them from the environment the chart sets. */
  function fromEnv(env: Record<string, string>): NatsOptions {
    const parsed = parseEnv(CommonEnvSchema, env);
    return {
      url: parsed.NATS_URL,
      name: "tls-test",
      tls: parsed.NATS_TLS === "true",
      tlsCaFile: parsed.NATS_TLS_CA_FILE,
      tlsCertFile: parsed.NATS_TLS_CERT_FILE,
      tlsKeyFile: parsed.NATS_TLS_KEY_FILE,
    };
  }

  async function attempt(options: NatsOptions): Promise<string> {
    try {
      const nc = await connectNats({ ...options, url: options.url });
      const rtt = await nc.rtt();
      await nc.close();
      return rtt >= 0 ? "connected" : "no round trip";
    } catch (error) {
      const cause = (error as Error).cause;
      return `refused: ${(error as Error).message}${cause instanceof Error ? ` (${cause.message})` : ""}`;
    }
  }

  it("connects with the CA and client certificate, through a comma-separated list whose first member is down", async () => {
    const dead = await freePort();
    const options = fromEnv({
      NATS_URL: `tls://127.0.0.1:${dead},tls://127.0.0.1:${port}`,
      NATS_TLS: "true",
      NATS_TLS_CA_FILE: files.ca,
      NATS_TLS_CERT_FILE: files.cert,
      NATS_TLS_KEY_FILE: files.key,
    });
    expect(await attempt(options)).toBe("connected");
  });

  it("is refused without the client certificate, and refuses a server its CA did not sign", async () => {
    const url = `nats://127.0.0.1:${port}`;
    expect(await attempt(fromEnv({ NATS_URL: url, NATS_TLS_CA_FILE: files.ca }))).toMatch(/^refused: /);
    expect(
      await attempt(
        fromEnv({
          NATS_URL: url,
          NATS_TLS_CA_FILE: files.otherCa,
          NATS_TLS_CERT_FILE: files.cert,
          NATS_TLS_KEY_FILE: files.key,
        }),
      ),
    ).toMatch(/^refused: .*(certificate|self[- ]signed)/i);
    // NATS_TLS=true alone verifies against the system CAs, which never signed the test server.
    expect(await attempt(fromEnv({ NATS_URL: url, NATS_TLS: "true" }))).toMatch(/^refused: /);
  });
});
