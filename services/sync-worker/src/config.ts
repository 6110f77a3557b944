import { CommonEnvSchema } from "@tenantplane/runtime";
import * as z from "zod";
import { DEFAULT_TENANT_LIMITS } from "./tenant-limits.js";

const positive = (what: string) => z.coerce.number({ error: `must be ${what}` }).positive(`must be ${what}`);
const whole = (what: string) =>
  z.coerce
    .number({ error: `must be ${what}` })
    .int(`must be ${what}`)
    .positive(`must be ${what}`);

/** The sync worker's environment. */
export const SyncWorkerEnvSchema = CommonEnvSchema.extend({
  /** Seconds between full passes per tenant (the GC safety net). */
  RESYNC_INTERVAL_SECONDS: positive("a number of seconds above 0").default(300),
  /** Partitions tenants are hashed into; every worker of a deployment must agree. */
  PARTITIONS: whole("a whole number from 1 to 65536").max(65_536, "must be at most 65536").default(128),
  /** Lease TTL: a dead worker's partitions are taken over after about this long. */
  LEASE_TTL_SECONDS: positive("a number of seconds of at least 1").min(1, "must be at least 1").default(6),
  /** JetStream KV bucket holding memberships and partition leases. */
  LEASE_BUCKET: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, "must be a bucket name (letters, digits, '_' and '-')")
    .default("sync-leases"),
  /**
   * Objects planned and applied at once across all tenants: enough that the host budget
   * (HOST_QPS), not round trips, limits a busy worker.
   */
  SYNC_CONCURRENCY: whole("a whole number above 0").default(16),
  /** Objects of one tenant in flight at once. */
  TENANT_CONCURRENCY: whole("a whole number above 0").default(4),
  /** Host writes per second and burst for one tenant. */
  TENANT_WRITE_QPS: positive("a rate above 0").default(100),
  TENANT_WRITE_BURST: whole("a whole number above 0").default(200),
  /**
   * Bytes of host copies one tenant may write per second (a second's worth at once; an object
   * larger than that waits for the whole second): a tenant copying megabyte objects must not
   * take the host API server's and etcd's time from every other tenant's writes.
   */
  TENANT_WRITE_BYTES_PER_SECOND: positive("a number of bytes above 0").default(2 * 1024 * 1024),
  /** Host API requests per second and burst for the whole worker. */
  HOST_QPS: positive("a rate above 0").default(200),
  HOST_BURST: whole("a whole number above 0").default(400),
  /**
   * Keys the content hash on host copies (HMAC), so a Secret copy's hash reveals nothing
   * about its values. Every worker must use the same key; changing it rewrites every copy once.
   */
  CONTENT_HASH_KEY: z.string().min(16, "must be at least 16 characters (mount it from a Secret)").optional(),
  /** Seconds between re-reads of each active tenant's kubeconfig Secret (rotation). */
  KUBECONFIG_CHECK_SECONDS: positive("a number of seconds above 0").default(30),
  /**
   * Longest time a tenant service-account token in a host Pod's token Secret goes
   * unrefreshed (as the kubelet's 24 h); tokens are refreshed earlier, at 75% of their lifetime.
   */
  TOKEN_REFRESH_MAX_SECONDS: positive("a number of seconds above 0").default(86_400),
  /** A tenant is quarantined after this many worker crashes counted against it within the window. */
  QUARANTINE_CRASHES: whole("a whole number above 0").default(3),
  QUARANTINE_WINDOW_SECONDS: positive("a number of seconds above 0").default(600),
  /** JetStream KV bucket holding busy markers, crash counts and quarantines. */
  CRASH_BUCKET: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, "must be a bucket name (letters, digits, '_' and '-')")
    .default("sync-crashes"),
  /** Tests only: the worker SIGKILLs itself on taking up a tenant object of this name. Never set it in production. */
  TENANTPLANE_FAULT_CRASH_ON_OBJECT_NAME: z.string().min(1).optional(),
  /**
   * What one tenant may make a worker hold; objects beyond are not synced (a Skip each, once,
   * and Synced=False naming the limit). See tenant-limits.ts for the defaults' reasoning.
   */
  TENANT_MAX_OBJECTS_PER_KIND: whole("a whole number of objects above 0").default(DEFAULT_TENANT_LIMITS.objectsPerKind),
  TENANT_MAX_OBJECT_BYTES: whole("a whole number of bytes above 0").default(DEFAULT_TENANT_LIMITS.objectBytes),
  TENANT_MAX_BYTES: whole("a whole number of bytes above 0").default(DEFAULT_TENANT_LIMITS.totalBytes),
});
export type SyncWorkerEnv = z.infer<typeof SyncWorkerEnvSchema>;
