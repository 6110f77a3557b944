import { describe, expect, it } from "vitest";
import { serviceStatusPatch } from "./services.js";

const tenant = { metadata: { name: "web" }, status: { loadBalancer: {} } };
const host = (ingress?: unknown) => ({
  metadata: { name: "web-x-shop-x-t" },
  status: { loadBalancer: ingress === undefined ? {} : { ingress } },
});

describe("serviceStatusPatch", () => {
  it("writes the host's load-balancer ingress back", () => {
    expect(serviceStatusPatch(tenant, host([{ ip: "127.0.0.165" }]))).toEqual({
      loadBalancer: { ingress: [{ ip: "127.0.0.165" }] },
    });
  });
  it("is undefined when the tenant already shows it, or neither has one", () => {
    const shown = { metadata: { name: "web" }, status: { loadBalancer: { ingress: [{ ip: "127.0.0.165" }] } } };
    expect(serviceStatusPatch(shown, host([{ ip: "127.0.0.165" }]))).toBeUndefined();
    expect(serviceStatusPatch(tenant, host())).toBeUndefined();
    expect(serviceStatusPatch(tenant, host([]))).toBeUndefined();
  });
  it("clears an address the host withdrew", () => {
    const shown = { metadata: { name: "web" }, status: { loadBalancer: { ingress: [{ ip: "127.0.0.165" }] } } };
    expect(serviceStatusPatch(shown, host())).toEqual({ loadBalancer: { ingress: null } });
  });
});
