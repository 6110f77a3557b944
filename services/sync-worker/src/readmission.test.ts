import type { RawObject } from "@tenantplane/kube";
import type { Logger } from "@tenantplane/runtime";
import { describe, expect, it } from "vitest";
import { Readmission } from "./readmission.js";
import { TenantBudget } from "./tenant-limits.js";

const noop = () => undefined;
const logger = { debug: noop, info: noop, warn: noop, error: noop, child: () => logger } as unknown as Logger;
const object = (name: string): RawObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { namespace: "shop", name, resourceVersion: "7" },
});
const settle = () => new Promise((r) => setTimeout(r, 20));

describe("Readmission", () => {
  it("reads again the held-back objects that fit once room is free and hands each to its watch", async () => {
    const budget = new TenantBudget({ objectsPerKind: 10, objectBytes: 1000, totalBytes: 1000 });
    budget.judge("ConfigMap", "shop", "a", 900);
    budget.judge("ConfigMap", "shop", "b", 500);
    budget.judge("ConfigMap", "shop", "gone", 400);
    const fetched: string[] = [];
    const handed: string[] = [];
    const readmission = new Readmission({
      budget,
      fetch: (_kind, _ns, name) => {
        fetched.push(name);
        if (name === "gone") return Promise.reject(Object.assign(new Error("not found"), { statusCode: 404 }));
        return Promise.resolve(object(name));
      },
      reconsider: (_kind, obj) => {
        handed.push(obj.metadata.name);
        return true;
      },
      logger,
    });
    readmission.schedule(0);
    await settle();
    expect(fetched).toEqual([]); // nothing fits while a holds its 900 bytes

    budget.release("ConfigMap", "shop", "a");
    readmission.schedule(0);
    await settle();
    expect(fetched).toEqual(["b", "gone"]);
    expect(handed).toEqual(["b"]);
    readmission.stop();
  });

  it("does nothing while nothing is held back, and nothing after stop", async () => {
    const budget = new TenantBudget({ objectsPerKind: 10, objectBytes: 1000, totalBytes: 1000 });
    let fetches = 0;
    const readmission = new Readmission({
      budget,
      fetch: () => {
        fetches++;
        return Promise.resolve(undefined);
      },
      reconsider: () => true,
      logger,
    });
    readmission.schedule(0);
    await settle();
    budget.judge("ConfigMap", "shop", "a", 900);
    budget.judge("ConfigMap", "shop", "b", 500);
    budget.release("ConfigMap", "shop", "a");
    readmission.stop();
    readmission.schedule(0);
    await settle();
    expect(fetches).toBe(0);
  });
});
