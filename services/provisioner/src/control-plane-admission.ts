import type { V1Container, V1StatefulSet } from "@kubernetes/client-node";
import type { IsolationProfileSpec } from "@tenantplane/api";
import { quantityValue } from "./internal/quantity.js";
import { DATA_VOLUME_NAME } from "./control-plane.js";

const COMPUTE = ["cpu", "memory"] as const;
type Compute = (typeof COMPUTE)[number];

/**
 * The rules of an isolation profile that would keep the control-plane pod (or its data volume)
 * from being admitted in the host namespace, each as a sentence naming the profile field, the
 * control-plane value it blocks and the fix. Empty when the control plane fits. Mirrors what
 * ResourceQuota and LimitRanger admission do with the pod the StatefulSet controller creates:
 * LimitRange defaults fill unset requests and limits, a request defaults to its limit, and a
 * quota on `requests.X`/`limits.X` refuses a pod that ends up without X. Pure.
 */
export function controlPlaneBlockers(profile: IsolationProfileSpec, sts: V1StatefulSet): string[] {
  const blockers: string[] = [];
  const pod = sts.spec?.template.spec;
  const containers = pod?.containers ?? [];
  const inits = pod?.initContainers ?? [];
  const claim = sts.spec?.volumeClaimTemplates?.find((c) => c.metadata?.name === DATA_VOLUME_NAME);
  const storage = claim?.spec?.resources?.requests?.["storage"];
  const limits = profile.limitRange;
  const hard = profile.resourceQuota.hard;

  const effective = [...inits, ...containers].map((c) => effectiveResources(c, limits.container));
  const podRequest = (r: Compute) =>
    podTotal(effective.slice(0, inits.length), effective.slice(inits.length), r, "requests");
  const podLimit = (r: Compute) =>
    podTotal(effective.slice(0, inits.length), effective.slice(inits.length), r, "limits");

  // The quota's amounts never refuse the control plane: the isolation service raises each limit
  // by the control plane's own share (controlPlaneShare), so a profile's numbers are the tenant's
  // alone. What the quota can still refuse is a pod that lacks a value it limits.
  const unset = (key: string, needed: number | undefined, what: string, field: string) => {
    if (hard[key] === undefined || needed !== undefined) return;
    blockers.push(
      `resourceQuota.hard[${key}] is set but the control plane's pod has no ${what} and the LimitRange supplies none: ` +
        `set ${field}, or give limitRange.container a default for it`,
    );
  };
  for (const r of COMPUTE) {
    const field = `spec.controlPlane.resources`;
    unset(`requests.${r}`, podRequest(r), `${r} request`, `${field}.requests.${r}`);
    unset(r, podRequest(r), `${r} request`, `${field}.requests.${r}`);
    unset(`limits.${r}`, podLimit(r), `${r} limit`, `${field}.limits.${r}`);
  }

  for (const [i, c] of effective.entries()) {
    const name = [...inits, ...containers][i]?.name ?? "?";
    for (const r of COMPUTE) {
      const request = c.requests[r];
      const limit = c.limits[r];
      const max = limits.container.max[r];
      const min = limits.container.min[r];
      if (max !== undefined && limit !== undefined && limit > value(max)) {
        blockers.push(
          `limitRange.container.max[${r}] is ${max}, below the ${r} limit of ${format(limit, r)} of the control plane's ` +
            `${name} container: raise the maximum or lower spec.controlPlane.resources`,
        );
      } else if (max !== undefined && request !== undefined && request > value(max)) {
        blockers.push(
          `limitRange.container.max[${r}] is ${max}, below the ${r} request of ${format(request, r)} of the control ` +
            `plane's ${name} container: raise the maximum or lower spec.controlPlane.resources.requests.${r}`,
        );
      }
      if (min !== undefined && (request === undefined || request < value(min))) {
        blockers.push(
          `limitRange.container.min[${r}] is ${min}, above the ${r} request of the control plane's ${name} container ` +
            `(${request === undefined ? "none" : format(request, r)}): lower the minimum or raise spec.controlPlane.resources.requests.${r}`,
        );
      } else if (min !== undefined && limit !== undefined && limit < value(min)) {
        blockers.push(
          `limitRange.container.min[${r}] is ${min}, above the ${r} limit of the control plane's ${name} container: ` +
            `lower the minimum or raise spec.controlPlane.resources.limits.${r}`,
        );
      }
      if (request !== undefined && limit !== undefined && request > limit && c.defaultedLimit[r]) {
        blockers.push(
          `limitRange.container.default[${r}] gives the control plane's ${name} container a ${r} limit of ` +
            `${format(limit, r)}, below its request of ${format(request, r)}: raise the default or set ` +
            `spec.controlPlane.resources.limits.${r}`,
        );
      }
    }
  }

  const size = storage === undefined ? undefined : value(storage);
  const claimMax = limits.persistentVolumeClaim.max["storage"];
  const claimMin = limits.persistentVolumeClaim.min["storage"];
  if (size !== undefined && claimMax !== undefined && size > value(claimMax)) {
    blockers.push(
      `limitRange.persistentVolumeClaim.max[storage] is ${claimMax}, below the control plane's volume of ${storage}: ` +
        "raise the maximum or lower spec.controlPlane.storage.size",
    );
  }
  if (size !== undefined && claimMin !== undefined && size < value(claimMin)) {
    blockers.push(
      `limitRange.persistentVolumeClaim.min[storage] is ${claimMin}, above the control plane's volume of ${storage}: ` +
        "lower the minimum or raise spec.controlPlane.storage.size",
    );
  }
  return blockers;
}

interface Effective {
  requests: Partial<Record<Compute, number>>;
  limits: Partial<Record<Compute, number>>;
  /** Which limits came from the LimitRange default rather than the container. */
  defaultedLimit: Partial<Record<Compute, boolean>>;
}

// What a container's requests and limits are once the API server's defaulting (request :=
// limit) and LimitRanger (limit := default ?? max, request := defaultRequest ?? default limit)
// have run.
function effectiveResources(container: V1Container, range: IsolationProfileSpec["limitRange"]["container"]): Effective {
  const out: Effective = { requests: {}, limits: {}, defaultedLimit: {} };
  for (const r of COMPUTE) {
    const ownLimit = quantity(container.resources?.limits?.[r]);
    const ownRequest = quantity(container.resources?.requests?.[r]) ?? ownLimit;
    const defaultLimit = quantity(range.default[r] ?? range.max[r]);
    const defaultRequest = quantity(range.defaultRequest[r]) ?? defaultLimit;
    const limit = ownLimit ?? defaultLimit;
    const request = ownRequest ?? defaultRequest;
    if (limit !== undefined) out.limits[r] = limit;
    if (request !== undefined) out.requests[r] = request;
    if (ownLimit === undefined && defaultLimit !== undefined) out.defaultedLimit[r] = true;
  }
  return out;
}

// A pod's total as quota counts it: the larger of the largest init container and the sum of
// the app containers; undefined when any container lacks the value (quota then refuses it).
function podTotal(
  inits: readonly Effective[],
  apps: readonly Effective[],
  r: Compute,
  kind: "requests" | "limits",
): number | undefined {
  let sum = 0;
  for (const c of apps) {
    const v = c[kind][r];
    if (v === undefined) return undefined;
    sum += v;
  }
  let largestInit = 0;
  for (const c of inits) {
    const v = c[kind][r];
    if (v === undefined) return undefined;
    largestInit = Math.max(largestInit, v);
  }
  return Math.max(sum, largestInit);
}

function quantity(text: string | undefined): number | undefined {
  return text === undefined ? undefined : quantityValue(text);
}

// Malformed quantities never reach here (the CRD schema refuses them); treat one as no limit.
function value(text: string): number {
  return quantityValue(text) ?? Number.POSITIVE_INFINITY;
}

function format(amount: number, what: string): string {
  if (what.startsWith("cpu")) return amount < 1 ? `${Math.round(amount * 1000)}m` : String(amount);
  if (what.startsWith("memory") || what === "volume size") {
    for (const [suffix, size] of [
      ["Gi", 2 ** 30],
      ["Mi", 2 ** 20],
      ["Ki", 2 ** 10],
    ] as const) {
      if (amount >= size && Number.isInteger(amount / size)) return `${amount / size}${suffix}`;
    }
  }
  return String(amount);
}
