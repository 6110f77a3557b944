import type { CoreV1Event } from "@kubernetes/client-node";
import type { EventSink } from "@tenantplane/kube";
import { createLogger } from "@tenantplane/runtime";
import { describe, expect, it } from "vitest";
import { syncFailedMessage, syncSkippedMessage, TENANT_EVENT_COMPONENT, TenantEvents } from "./tenant-events.js";

const hostRef = { namespace: "tp-dev", name: "web-x-shop-x-dev" };

describe("tenant Event messages", () => {
  it("say which write the host refused, with its code, reason and words", () => {
    const error = { code: 403, reason: "Forbidden", message: "exceeded quota: q", attempted: "Create" as const };
    expect(syncFailedMessage("Pod", hostRef, error)).toBe(
      "the host refused to create this Pod's copy tp-dev/web-x-shop-x-dev (403 Forbidden): exceeded quota: q",
    );
    expect(syncFailedMessage("Pod", hostRef, { code: 0, reason: "ETIMEDOUT", message: "timed out" })).toBe(
      "the host refused to write this Pod's copy tp-dev/web-x-shop-x-dev (ETIMEDOUT): timed out",
    );
    expect(syncSkippedMessage("Pod", hostRef, "refused by host rules: spec.hostNetwork")).toBe(
      "this Pod is not copied to the host (tp-dev/web-x-shop-x-dev): refused by host rules: spec.hostNetwork",
    );
  });
});

describe("TenantEvents", () => {
  class Sink implements EventSink {
    readonly created: CoreV1Event[] = [];
    refuse = false;
    async create(_namespace: string, event: CoreV1Event) {
      if (this.refuse) throw Object.assign(new Error("forbidden"), { code: 403 });
      this.created.push(event);
    }
    async patch(_namespace: string, name: string, patch: { count: number }) {
      const e = this.created.find((c) => c.metadata?.name === name);
      if (e) e.count = patch.count;
    }
  }

  it("writes Warnings on the tenant object as the sync worker and folds repeats", async () => {
    const sink = new Sink();
    const outcomes: string[] = [];
    const events = new TenantEvents(sink, {
      instance: "w-1",
      logger: createLogger("t", "silent"),
      count: (o) => outcomes.push(o),
    });
    const pod = { kind: "Pod", namespace: "shop", name: "web", uid: "u-1" };
    await events.warn(pod, "SyncFailed", "refused");
    await events.warn(pod, "SyncFailed", "refused");
    expect(sink.created).toHaveLength(1);
    expect(sink.created[0]).toMatchObject({
      involvedObject: { apiVersion: "v1", kind: "Pod", namespace: "shop", name: "web", uid: "u-1" },
      type: "Warning",
      reason: "SyncFailed",
      count: 2,
      source: { component: TENANT_EVENT_COMPONENT },
    });
    sink.refuse = true;
    await events.warn({ ...pod, name: "other" }, "SyncFailed", "refused");
    expect(outcomes).toEqual(["created", "aggregated", "failed"]);
  });
});
