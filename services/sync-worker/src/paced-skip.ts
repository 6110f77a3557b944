import type { SkipMemory } from "./skip-memory.js";

/** What a Skip waits for before it is published: the tenant's write budget and the lease. */
export interface SkipGate {
  /** Resolves when the tenant may write again (its per-tenant budget). */
  writeToken(): Promise<void>;
  /** False once this worker may no longer act for the tenant (lease lost, syncer stopped). */
  mayWrite(): boolean;
}

/**
 * Whether the Skip of `key` for (`version`, `reason`) is published now. A Skip that is news
 * (see SkipMemory) costs one token of the tenant's write budget, like a host write: its
 * Decision, its Warning Event on the TenantCluster and its Event inside the tenant are writes
 * to shared streams and API servers, so a tenant with 100,000 refused objects is paced like
 * one writing them and cannot flood the others. The lease is checked after the wait; a Skip
 * given up then is forgotten, so it is news again for whoever acts for the tenant next.
 */
export async function admitSkip(
  skips: SkipMemory,
  key: string,
  version: string,
  reason: string,
  gate: SkipGate,
): Promise<boolean> {
  if (!skips.shouldPublish(key, version, reason)) return false;
  await gate.writeToken();
  if (gate.mayWrite()) return true;
  skips.forget(key);
  return false;
}
