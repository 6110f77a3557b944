import { describe, expect, it } from "vitest";
import {
  DNS_SUBDOMAIN,
  IMAGE_REFERENCE,
  isContainerResourceName,
  isQualifiedName,
  isQuotaResourceName,
  isWholeQuotaResource,
} from "./names.js";

describe("image references", () => {
  it.each([
    "rancher/k3s:v1.34.1-k3s1",
    "k3s",
    "registry.example.com:5000/team/k3s:v1",
    "localhost:5000/k3s",
    "ghcr.io/a_b/c__d/e-f.g:latest",
    `rancher/k3s@sha256:${"a".repeat(64)}`,
    `rancher/k3s:v1@sha256:${"0".repeat(64)}`,
  ])("accepts %s", (image) => expect(IMAGE_REFERENCE.test(image)).toBe(true));

  it.each([
    " rancher/k3s",
    "rancher/k3s ",
    "Rancher/K3S:v1",
    "rancher/k3s:",
    "rancher//k3s",
    "rancher/k3s@sha256:xyz",
    "",
  ])("refuses %j", (image) => expect(IMAGE_REFERENCE.test(image)).toBe(false));
});

describe("names", () => {
  it("knows DNS subdomains", () => {
    expect(DNS_SUBDOMAIN.test("fast-ssd.example")).toBe(true);
    expect(DNS_SUBDOMAIN.test("Fast_SSD")).toBe(false);
  });

  it("knows qualified names, with the prefix and name bounds", () => {
    expect(isQualifiedName("service.beta.kubernetes.io/aws-load-balancer-scheme")).toBe(true);
    expect(isQualifiedName("plain_Name.1")).toBe(true);
    expect(isQualifiedName("lb.example.com/idle timeout!")).toBe(false);
    expect(isQualifiedName(`example.com/${"a".repeat(64)}`)).toBe(false);
    expect(isQualifiedName(`${"a".repeat(254)}/x`)).toBe(false);
    expect(isQualifiedName("/x")).toBe(false);
  });

  it("knows quota resource names and which must be whole", () => {
    for (const key of [
      "pods",
      "requests.storage",
      "count/deployments.apps",
      "requests.nvidia.com/gpu",
      "hugepages-2Mi",
    ])
      expect(isQuotaResourceName(key), key).toBe(true);
    for (const key of ["cpus", "requests.gpu", "storage", "bad key/x"])
      expect(isQuotaResourceName(key), key).toBe(false);
    expect(isWholeQuotaResource("pods")).toBe(true);
    expect(isWholeQuotaResource("count/secrets")).toBe(true);
    expect(isWholeQuotaResource("requests.cpu")).toBe(false);
    expect(isWholeQuotaResource("requests.nvidia.com/gpu")).toBe(false);
  });

  it("knows container resource names", () => {
    for (const key of ["cpu", "memory", "ephemeral-storage", "hugepages-1Gi", "nvidia.com/gpu"])
      expect(isContainerResourceName(key), key).toBe(true);
    for (const key of ["storage", "pods", "requests.example.com/x", "gpu"])
      expect(isContainerResourceName(key), key).toBe(false);
  });
});
