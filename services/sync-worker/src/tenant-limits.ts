import type { RawObject } from "@tenantplane/kube";
import { systemNamespaceReason } from "@tenantplane/sync";
import { encodeKey, type SourceKey } from "./source-key.js";

/**
 * What one tenant may make a sync worker hold: objects of each synced kind, bytes of one
 * object and bytes of all its objects together (as the API server serialises them).
 */
export interface TenantLimits {
  objectsPerKind: number;
  objectBytes: number;
  totalBytes: number;
}

const MiB = 1024 * 1024;

/**
 * Defaults: the per-object limit admits anything the API server stores (etcd takes at most
 * 1.5 MiB a request); 128 MiB a tenant keeps a 768Mi worker well clear of its limit with one
 * tenant at the limit and the rest small. A tenant needing more is named in its Skips.
 */
export const DEFAULT_TENANT_LIMITS: TenantLimits = {
  objectsPerKind: 10_000,
  objectBytes: 1.5 * MiB,
  totalBytes: 128 * MiB,
};

/** Which limit an object is beyond, with the chart value (and variable) that raises it. */
export const LIMIT_SETTINGS = {
  objectsPerKind: { env: "TENANT_MAX_OBJECTS_PER_KIND", what: "objects per kind" },
  objectBytes: { env: "TENANT_MAX_OBJECT_BYTES", what: "per object" },
  totalBytes: { env: "TENANT_MAX_BYTES", what: "in total" },
} as const;

export type LimitName = keyof typeof LIMIT_SETTINGS;

/** One object held back, and why. */
export interface Excess {
  limit: LimitName;
  /** The object's size in bytes. */
  bytes: number;
}

/**
 * Counts what one tenant's cached objects weigh and decides, as each version arrives, whether
 * it is kept whole (admitted) or held back beyond a limit. First come, first admitted: an
 * admitted object stays admitted while its new versions fit; a held-back one is admitted when
 * a later version of it fits. Objects the planner never syncs (system namespaces) are not
 * counted. Pure bookkeeping, no I/O.
 */
export class TenantBudget {
  private readonly admitted = new Map<string, Map<string, number>>();
  private readonly held = new Map<string, Excess & { kind: string; namespace: string; name: string }>();
  private total = 0;

  constructor(readonly limits: TenantLimits) {}

  /** The size of the admitted version of an object, or undefined when none is (held back, not counted). */
  bytesOf(key: SourceKey): number | undefined {
    return this.admitted.get(key.kind)?.get(encodeKey(key));
  }

  /** Judges one arriving version of `obj` (`bytes` long): undefined when admitted, else the excess. */
  judge(kind: string, namespace: string, name: string, bytes: number): Excess | undefined {
    if (systemNamespaceReason(namespace) !== undefined) return undefined;
    const key = encodeKey({ kind, namespace, name });
    let ofKind = this.admitted.get(kind);
    if (ofKind === undefined) this.admitted.set(kind, (ofKind = new Map()));
    const before = ofKind.get(key);
    const others = this.total - (before ?? 0);
    const limit = this.limitFor(kind, key, bytes);
    if (limit === undefined) {
      ofKind.set(key, bytes);
      this.total = others + bytes;
      this.held.delete(key);
      return undefined;
    }
    if (before !== undefined) {
      ofKind.delete(key);
      this.total = others;
    }
    const excess = { limit, bytes };
    this.held.set(key, { ...excess, kind, namespace, name });
    return excess;
  }

  /** Whether a version of `bytes` would be admitted now; judges nothing. */
  fits(kind: string, namespace: string, name: string, bytes: number): boolean {
    if (systemNamespaceReason(namespace) !== undefined) return true;
    return this.limitFor(kind, encodeKey({ kind, namespace, name }), bytes) === undefined;
  }

  private limitFor(kind: string, key: string, bytes: number): LimitName | undefined {
    const ofKind = this.admitted.get(kind);
    const before = ofKind?.get(key);
    if (bytes > this.limits.objectBytes) return "objectBytes";
    if (before === undefined && (ofKind?.size ?? 0) >= this.limits.objectsPerKind) return "objectsPerKind";
    if (this.total - (before ?? 0) + bytes > this.limits.totalBytes) return "totalBytes";
    return undefined;
  }

  /** The object is gone from the tenant: its room is free. */
  release(kind: string, namespace: string, name: string): void {
    const key = encodeKey({ kind, namespace, name });
    const bytes = this.admitted.get(kind)?.get(key);
    if (bytes !== undefined) {
      this.admitted.get(kind)?.delete(key);
      this.total -= bytes;
    }
    this.held.delete(key);
  }

  /**
   * Held-back objects that would fit now that room is free, oldest first, as many as fit
   * together (by the size each had when it was held back). An object over the per-object
   * limit never fits: only a smaller version of it, which its watch brings, is admitted.
   */
  readmittable(): { kind: string; namespace: string; name: string }[] {
    const out: { kind: string; namespace: string; name: string }[] = [];
    let total = this.total;
    const counts = new Map<string, number>();
    for (const h of this.held.values()) {
      if (h.limit === "objectBytes") continue;
      const count = counts.get(h.kind) ?? this.admitted.get(h.kind)?.size ?? 0;
      if (count >= this.limits.objectsPerKind || total + h.bytes > this.limits.totalBytes) continue;
      total += h.bytes;
      counts.set(h.kind, count + 1);
      out.push({ kind: h.kind, namespace: h.namespace, name: h.name });
    }
    return out;
  }

  /** Why the source (encoded key) is held back, or undefined when it is admitted or unknown. */
  excess(key: string): Excess | undefined {
    return this.held.get(key);
  }

  /** Bytes of the admitted objects. */
  get bytes(): number {
    return this.total;
  }

  /** Held-back objects now. */
  get heldBack(): number {
    return this.held.size;
  }

  /**
   * One line for the Synced condition: how many objects are held back beyond which limit, and
   * the chart values to raise; undefined when none is.
   */
  summary(): string | undefined {
    if (this.held.size === 0) return undefined;
    const by = new Map<LimitName, number>();
    for (const e of this.held.values()) by.set(e.limit, (by.get(e.limit) ?? 0) + 1);
    // In a fixed order, so the condition does not change with the order objects arrived in.
    const parts = (Object.keys(LIMIT_SETTINGS) as LimitName[])
      .filter((limit) => by.has(limit))
      .map((limit) => `${by.get(limit)} beyond ${limitText(limit, this.limits)}`);
    return `${this.held.size} object${this.held.size === 1 ? "" : "s"} not synced, over the tenant limits: ${parts.join("; ")}`;
  }

  /** The Skip reason for a held-back source: stable for one version, so it is published once. */
  reason(kind: string, namespace: string, name: string, excess: Excess): string {
    const what = `${kind} ${namespace}/${name}`;
    const raise = `raise ${chartValue(excess.limit)} to sync it`;
    switch (excess.limit) {
      case "objectBytes":
        return `${what} is ${formatBytes(excess.bytes)}, over the limit of ${formatBytes(this.limits.objectBytes)} per object: not synced; ${raise}`;
      case "objectsPerKind":
        return `the tenant has more than ${this.limits.objectsPerKind} ${kind}s, the limit per kind: ${what} not synced; ${raise}`;
      case "totalBytes":
        return `${what} (${formatBytes(excess.bytes)}) would take the tenant's objects over the limit of ${formatBytes(this.limits.totalBytes)} in total: not synced; ${raise}`;
    }
  }
}

/** `services.sync-worker.env.TENANT_MAX_BYTES`: where the chart sets the limit. */
export function chartValue(limit: LimitName): string {
  return `the chart value services.sync-worker.env.${LIMIT_SETTINGS[limit].env}`;
}

function limitText(limit: LimitName, limits: TenantLimits): string {
  const value =
    limit === "objectsPerKind"
      ? String(limits.objectsPerKind)
      : formatBytes(limit === "objectBytes" ? limits.objectBytes : limits.totalBytes);
  return `${value} ${LIMIT_SETTINGS[limit].what} (${chartValue(limit)})`;
}

/** `1.5 MiB`, `800 KiB`, `12 B`. */
export function formatBytes(bytes: number): string {
  if (bytes >= MiB) return `${trim(bytes / MiB)} MiB`;
  if (bytes >= 1024) return `${trim(bytes / 1024)} KiB`;
  return `${bytes} B`;
}

function trim(n: number): string {
  return n.toFixed(1).replace(/\.0$/, "");
}

/**
 * An object's size as the API server serialises it (the JSON the worker received): the UTF-8
 * length of `JSON.stringify(obj)`, counted without writing that text (a megabyte object would
 * cost a megabyte string and milliseconds of the event loop for one number).
 */
export function sizeOf(obj: RawObject): number {
  return jsonBytes(obj) ?? 0;
}

/**
 * The size {@link sizeOf} would give an object read from a watch event by its metadata alone
 * (`objectBytes` of JSON on the wire, of which `metadataBytes` its metadata as sent): the
 * metadata as cached (without managed fields) in place of the metadata as sent.
 */
export function sizeFromWire(metadata: RawObject["metadata"], objectBytes: number, metadataBytes: number): number {
  return objectBytes - metadataBytes + (jsonBytes(metadata) ?? 0);
}

/** UTF-8 bytes of `JSON.stringify(value)`; undefined where it writes nothing (undefined, functions). */
function jsonBytes(value: unknown): number | undefined {
  switch (typeof value) {
    case "string":
      // Plain text is its UTF-8 bytes and two quotes; only text that JSON escapes is written out.
      return PLAIN.test(value) ? Buffer.byteLength(value) + 2 : Buffer.byteLength(JSON.stringify(value));
    case "number":
      return Number.isFinite(value) ? String(value).length : 4;
    case "boolean":
      return value ? 4 : 5;
    case "object": {
      if (value === null) return 4;
      if (typeof (value as { toJSON?: unknown }).toJSON === "function") return Buffer.byteLength(JSON.stringify(value));
      if (Array.isArray(value)) {
        let n = 2 + Math.max(0, value.length - 1);
        for (const item of value) n += jsonBytes(item) ?? 4;
        return n;
      }
      let n = 2;
      let fields = 0;
      for (const [k, v] of Object.entries(value)) {
        const bytes = jsonBytes(v);
        if (bytes === undefined) continue;
        n += (jsonBytes(k) ?? 0) + 1 + bytes;
        fields++;
      }
      return n + Math.max(0, fields - 1);
    }
    default:
      // bigint throws in JSON.stringify; the API server never sends one.
      return undefined;
  }
}

/** Text JSON.stringify writes as it is: no quote, backslash, control character or lone surrogate half. */
const PLAIN = /^[\u0020\u0021\u0023-\u005b\u005d-\ud7ff\ue000-\uffff]*$/;

/**
 * What the worker keeps of a held-back tenant object: its identity and version, nothing the
 * tenant wrote (data, spec, labels, annotations), so an object beyond the limits costs a few
 * hundred bytes whatever its size.
 */
export function heldBackStub(obj: RawObject): RawObject {
  const m = obj.metadata;
  const keep: RawObject["metadata"] = { name: m.name };
  for (const field of [
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
  ]) {
    if (m[field] !== undefined) keep[field] = m[field];
  }
  return { apiVersion: obj.apiVersion, kind: obj.kind, metadata: keep };
}

/** Kinds whose host copies carry the tenant's payload; the planner reads only their metadata. */
const PAYLOAD_KINDS = new Set(["ConfigMap", "Secret"]);
const PAYLOAD_FIELDS = ["data", "binaryData", "stringData"];

/** Whether `kind`'s sync copies carry the tenant's payload, which the worker never reads back. */
export function isPayloadKind(kind: string): boolean {
  return PAYLOAD_KINDS.has(kind);
}

/**
 * A host sync copy as the worker caches it: a ConfigMap or Secret copy without its payload.
 * The planner compares the content hash annotation, never the data, and every write sends
 * the whole desired object, so the payload would only be a second copy of the tenant's data.
 * Objects without the sync kind label (tenantplane's own DNS records, Pod token Secrets) are
 * kept whole: their writers read them. The worker asks the host for sync copies as metadata
 * only (host-copy-watch.ts), so this drops a payload only where a server sent whole objects
 * anyway (the Accept header's fallback).
 */
export function leanHostCopy(obj: RawObject, kindLabel: string): RawObject {
  withoutManagedFields(obj);
  if (!PAYLOAD_KINDS.has(obj.kind ?? "") || obj.metadata.labels?.[kindLabel] === undefined) return obj;
  if (!PAYLOAD_FIELDS.some((f) => f in obj)) return obj;
  const lean: RawObject = { ...obj };
  for (const f of PAYLOAD_FIELDS) delete lean[f];
  return lean;
}

/**
 * Drops `metadata.managedFields` from a freshly read object, in place. Nothing the sync worker
 * plans, compares or writes reads them (its writes send whole objects; applies are forced), and
 * they are often the largest part of a Pod's metadata: every writer (the tenant's client, the
 * scheduler, the kubelet or kwok, back-sync) leaves an entry with the field set it wrote, on
 * both the tenant object and its host copy, held as long as the object is cached.
 */
export function withoutManagedFields(obj: RawObject): RawObject {
  if (obj.metadata.managedFields !== undefined) delete obj.metadata.managedFields;
  return obj;
}
