import type { JsonClient, RequestBudget } from "@tenantplane/kube";
import { describe, expect, it } from "vitest";
import { HOST_REQUEST_TIMEOUT_MS, HostWriter, LeaseLostError, requestDeadline } from "./host-writer.js";

const cm = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "a", namespace: "tp-acme", labels: {}, annotations: {} },
  data: {},
};

/** A budget whose wait is released by hand, and a client that records what was sent and when. */
function rig() {
  const events: string[] = [];
  let release!: () => void;
  const budget = {
    wait: () => {
      events.push("budget wait");
      return new Promise<void>((r) => (release = r));
    },
  } as unknown as RequestBudget;
  const sent: { method: string; signal?: AbortSignal }[] = [];
  const client = {
    request: (method: string, _path: string, init: { signal?: AbortSignal } = {}) => {
      events.push(`sent ${method}`);
      sent.push({ method, ...(init.signal ? { signal: init.signal } : {}) });
      return Promise.resolve({ metadata: { name: "a" } });
    },
  } as unknown as JsonClient;
  return { events, sent, writer: new HostWriter(client, "fm", budget, () => undefined), release: () => release() };
}

describe("HostWriter.forTenant", () => {
  it("checks the lease after the budget wait, right before sending: a lease lost during the wait sends nothing", async () => {
    const { events, sent, writer, release } = rig();
    let valid = 5_000;
    const leased = writer.forTenant(() => {
      events.push(`lease checked (${valid} ms left)`);
      return valid;
    });
    const pending = leased.create(cm);
    await Promise.resolve();
    valid = 0;
    release();
    await expect(pending).rejects.toBeInstanceOf(LeaseLostError);
    expect(events).toEqual(["budget wait", "lease checked (0 ms left)"]);
    expect(sent).toEqual([]);
  });

  it("bounds each request by the lease's remaining validity", async () => {
    const { events, sent, writer, release } = rig();
    const leased = writer.forTenant(() => 120);
    const pending = leased.update(cm, { metadata: { name: "a", resourceVersion: "1", uid: "u" } });
    release();
    await pending;
    expect(events).toEqual(["budget wait", "sent PUT"]);
    const signal = sent[0]?.signal;
    expect(signal?.aborted).toBe(false);
    await new Promise((r) => setTimeout(r, 250));
    expect(signal?.aborted).toBe(true);
  });

  it("the unleased writer (tenantplane's own objects) sends without a lease deadline", async () => {
    const { sent, writer, release } = rig();
    const pending = writer.delete({ kind: "ConfigMap", metadata: { name: "a", namespace: "tp-acme" } });
    release();
    await pending;
    expect(sent).toEqual([{ method: "DELETE" }]);
  });
});

describe("requestDeadline", () => {
  it("is the lease's remaining validity, at most the host timeout, and 0 (send nothing) once it is gone", () => {
    expect(requestDeadline(0)).toBe(0);
    expect(requestDeadline(-5)).toBe(0);
    expect(requestDeadline(Number.NaN)).toBe(0);
    expect(requestDeadline(0.4)).toBe(1);
    expect(requestDeadline(1_500.7)).toBe(1_500);
    expect(requestDeadline(10 * 60_000)).toBe(HOST_REQUEST_TIMEOUT_MS);
  });
});
