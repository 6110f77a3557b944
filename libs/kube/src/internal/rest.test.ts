import https from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RestClient } from "./rest.js";
import { kubeConfigFor, localCertificate } from "./test-tls.js";

// A local TLS endpoint that counts the TLS connections made to it and echoes the bearer token.
let server: https.Server;
let ca: string;
let handshakes = 0;

beforeAll(async () => {
  const { cert, key } = localCertificate();
  ca = cert;
  server = https.createServer({ cert: ca, key }, (req, res) => {
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ authorization: req.headers.authorization }));
  });
  server.on("secureConnection", () => handshakes++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("RestClient connections", () => {
  it("keeps its TLS connections open across requests instead of one handshake per request", async () => {
    const kc = kubeConfigFor(server, ca, "first");
    const client = new RestClient(kc);
    const before = handshakes;
    for (let i = 0; i < 20; i++) await client.request({ method: "GET", path: "/api/v1/namespaces/x" });
    expect(handshakes - before).toBe(1);
    await Promise.all(Array.from({ length: 10 }, () => client.request({ method: "GET", path: "/api/v1/pods" })));
    expect(handshakes - before).toBeLessThanOrEqual(10);

    // Credentials other than TLS ones are read per request, over the same connections.
    kc.users[0] = { ...kc.users[0]!, token: "second" };
    const opened = handshakes;
    const answer = await client.request<{ authorization: string }>({ method: "GET", path: "/version" });
    expect(answer.authorization).toBe("Bearer second");
    expect(handshakes).toBe(opened);
  });
});
